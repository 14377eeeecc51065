# The push twin of ordering/ok/persist-pulled-by-nvme.fx: the GPU's copy engine writes the KV
# checkpoint into the NVMe controller's persistent memory region (PMR, a persistent BAR) itself.
# Those are posted writes: `spill` completes at the GPU before they reach the controller, so a
# power loss may still drop them (NVM Express Base Specification, Persistent Memory Region: the
# write barrier mechanisms, PMRWBM, make earlier writes persistent once a read of the PMR has
# completed). Fix: `flush up0` after the copy, or a read-back of the PMR by the GPU over the same
# route.
policy "persist-pushed-to-nvme-pmr"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nvme0: nvme hooks [sq_doorbell, dma_done, completion]
  link up0 = gpu0 -- nvme0 : pcie posted
}
space hbm0 on gpu0 size 80 GiB
space pmr on nvme0 size 1 GiB persistent
region kv in hbm0 at 0x1000_0000 size 2 MiB owner gpu0 dtype bf16 init
region ckpt in pmr at 0x0 size 2 MiB owner gpu0 dtype bf16

flow save {
  edge spill: move kv -> ckpt by gpu0.copy_done transform persist  # expect: FX-ORD-003
  # ^ `spill` persists bytes over posted link `up0`, and no flush of `up0` follows it
}
