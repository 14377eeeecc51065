# A KV pool `kv` on the GPU holds blocks `blk0` and `blk1`. The GPU offloads `blk1` to the CXL
# expander (a handoff of that block alone), then leases the whole pool to the DPU, which sends
# both blocks. A lease lends only what its grantor owns: after `offload` the expander owns `blk1`,
# so the lease of `kv` does not cover it, and the DPU reads a block nobody lent it.
policy "lease-of-pool-lends-no-foreign-block"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [tx]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- dpu0 : pcie ordered
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
region kv in hbm0 at 0x4000_0000 size 512 KiB owner gpu0 dtype bf16
region blk0 in hbm0 at 0x4000_0000 size 256 KiB owner gpu0 dtype bf16
region blk1 in hbm0 at 0x4004_0000 size 256 KiB owner gpu0 dtype bf16
alias_set kv_pool = [kv, blk0, blk1]

flow send_pool {
  edge fill: write kv by gpu0.launch
  edge offload: read blk1 by gpu0.copy_done after fill handoff blk1: gpu0 -> cxl0
  edge share: read blk0[0, +64] by gpu0.launch after offload lease kv to dpu0
  edge send0: read blk0 by dpu0.tx after share
  edge send1: read blk1 by dpu0.tx after share  # expect: FX-OWN-001
  # ^ `send1` reads `blk1` from `dpu0`, which neither owns nor leases it then
}
