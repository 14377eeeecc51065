# Fixed twin of fail/no-path-to-expander.fx: an NVLink joins gpu1 to gpu0, whose CXL port reaches
# the expander, so the spill has a path gpu1 -> gpu0 -> cxl0, and its driver gpu1 lies on it.
policy "path-over-nvlink"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device gpu1: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
  link gpu1 -- gpu0 : nvlink ordered
}
space hbm1 on gpu1 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv1 in hbm1 at 0x0 size 2 MiB owner gpu1 dtype bf16 init
region pool in hdm0 at 0x80_2000_0000 size 2 MiB owner gpu1 dtype bf16

flow spill {
  edge spill: move kv1 -> pool by gpu1.copy_done
}
