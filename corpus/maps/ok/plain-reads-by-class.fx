# Plain reads decide nothing, so they carry no obligation (only a `guard` must see the write it
# depends on, FX-MAP-003), but their map's class still says what they may return. `peek` reads
# the `causal` progress map while `attn1`'s update may be in flight: it is sure to see `attn0`'s
# update (which happens-before it) and may or may not see `attn1`'s, so it reads 1 or 2. It also
# reads the `linearizable` home map while `spill` is writing it: 0 or `cxl0`. `audit` runs after
# `spill`, so it must read `cxl0`. `fxverify lower --kernel-run` checks the kernel's values.
policy "plain-reads-by-class"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_0000_0000 size 256 MiB
region kv0 in hbm0 at 0x0 size 2 MiB owner gpu0 dtype bf16
region kv1 in hbm0 at 0x20_0000 size 2 MiB owner gpu0 dtype bf16
region pool in hdm0 at 0x80_0000_0000 size 2 MiB owner gpu0 dtype bf16
map layer_done: array<u32, u32>[32] class causal merge max
map block_home: hash<u32, device>[4096] class linearizable

flow step {
  edge attn0: write kv0 by gpu0.launch update layer_done[0] = 1
  edge attn1: write kv1 by gpu0.launch update layer_done[0] = 2
  edge spill: move kv0 -> pool by gpu0.copy_done after attn0 map_write block_home[7] = cxl0
  edge peek: read kv0 by gpu0.launch after attn0 map_read layer_done[0] map_read block_home[7]
  edge audit: read kv1 by gpu0.launch after spill, attn1 map_read block_home[7] map_read layer_done[0]
}
