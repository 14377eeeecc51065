# The policy declares that spilled KV blocks end up owned by the CXL expander, but the spill edge
# hands the pool block to the DPU instead (a copy-paste slip in the handoff). The final owner is
# the destination of the last handoff, and it differs from the declared one.
policy "final-owner-mismatch"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 dtype bf16 init
region pool in hdm0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16

flow spill {
  edge spill: move kv -> pool by gpu0.copy_done handoff pool: gpu0 -> dpu0
  final owner pool = cxl0  # expect: FX-OWN-005
  # ^ the final owner of `pool` may differ from the declared `cxl0`
}
