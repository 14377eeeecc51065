# Fixed twin of fail/final-owner-mismatch.fx: the spill hands the pool block to the CXL expander,
# which is also the declared final owner, so the owner at the end of the flow is unique and right.
policy "final-owner-as-declared"

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
  edge spill: move kv -> pool by gpu0.copy_done handoff pool: gpu0 -> cxl0
  final owner pool = cxl0
}
