# Fixed twin of fail/hb-cycle.fx: the order goes one way only. The spill copies the KV block to
# CXL memory, then the free releases the GPU copy after the spill has finished.
policy "spill-then-free"

fabric {
  device gpu0: gpu hooks [launch, copy_done, free]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 dtype bf16 init
region pool in hdm0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16

flow spill {
  edge spill: move kv -> pool by gpu0.copy_done
  edge drop: release kv free by gpu0.free after spill
}
