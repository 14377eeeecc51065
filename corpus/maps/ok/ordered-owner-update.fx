# Fixed twin of fail/lost-owner-update.fx: the second spill (a replica on the other expander) runs
# after the first, so the blind writes to `block_home[7]` are ordered and the last one, `cxl1`,
# is the value every later reader sees.
policy "ordered-owner-update"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  device cxl1: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
  link gpu0 -- cxl1 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_0000_0000 size 256 MiB
space hdm1 on cxl1 base 0x90_0000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 dtype bf16 init
region pool0 in hdm0 at 0x80_0000_0000 size 2 MiB owner gpu0 dtype bf16
region pool1 in hdm1 at 0x90_0000_0000 size 2 MiB owner gpu0 dtype bf16
map block_home: hash<u32, device>[4096] class linearizable

flow spill {
  edge spill0: move kv -> pool0 by gpu0.copy_done map_write block_home[7] = cxl0
  edge spill1: move kv -> pool1 by gpu0.copy_done after spill0 map_write block_home[7] = cxl1
}
