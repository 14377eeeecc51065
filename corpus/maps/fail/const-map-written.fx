# `spill_home` is a `const` map: the table of which CXL expander each layer spills to, filled by
# the runtime before the flow and loaded read-only for programs. A rebalancing edge then rewrites
# the table to point layer 0 at the other expander. No edge may write a `const` map: the kernel
# verifier rejects the program, and every reader counts on the value loaded before the flow. Keep
# what changes during the flow in a writable map.
policy "const-map-written"

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
  edge rebalance: move kv -> pool1 by gpu0.copy_done after spill0 map_write spill_home[0] = cxl1  # expect: FX-MAP-005
  # ^ `rebalance` writes `spill_home[0]`, but `spill_home` is a `const` map
}
