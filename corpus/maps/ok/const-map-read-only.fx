# Fixed twin of fail/const-map-written.fx: the `const` table `spill_home` is only read, by both
# spill edges and by a guard; where layer 0's block lives now is recorded in the writable
# `block_home` map instead. Every read of a `const` map sees the value loaded before the flow, so
# the guard needs no ordering against any edge (an unordered guard of a writable map would).
policy "const-map-read-only"

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
map spill_home: array<u32, device>[64] class const
map block_home: hash<u32, device>[4096] class linearizable

flow spill {
  edge spill0: move kv -> pool0 by gpu0.copy_done map_read spill_home[0]
  edge rebalance: move kv -> pool1 by gpu0.copy_done after spill0 map_read spill_home[1] map_write block_home[0] = cxl1
  edge check: read kv by gpu0.launch guard spill_home[0] == 0
}
