# One copy-completion edge hands the staging buffer to the NIC and, in the same breath, to the
# DPU. A region's bytes go to one new owner per edge: the owner after `give` would depend on
# which clause is read last, and the declared final owner cannot be relied on.
policy "one-edge-two-owners"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nic0: nic hooks [rx, tx, dma_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- nic0 : pcie ordered
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region stage in hbm0 at 0x6000_0000 size 1 MiB owner gpu0 dtype bf16 init

flow ship {
  edge give: read stage by gpu0.copy_done handoff stage: gpu0 -> nic0 handoff stage: gpu0 -> dpu0  # expect: FX-OWN-003
  # ^ `give` hands `stage` to both `dpu0` and `nic0`
  final owner stage = dpu0
}
