# Two unordered spill edges record where a KV block lives by blind writes (`map_write`) to the
# same entry of a shared map. The writes may run concurrently, and whichever lands last wins: the
# map can name a location the block was never spilled to. Order the writers, or use `update` with
# an associative and commutative merge.
policy "lost-owner-update"

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
  edge spill1: move kv -> pool1 by gpu0.copy_done map_write block_home[7] = cxl1  # expect: FX-MAP-002
  # ^ `spill0` and `spill1` may write `block_home[7]` concurrently: one update is lost
}
