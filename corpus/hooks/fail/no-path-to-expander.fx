# The policy spills KV blocks from gpu1 into a CXL expander, but the expander hangs off gpu0's
# CXL port and no link joins gpu1 to either of them. Without a fabric path between the source's
# device and the destination's device the copy cannot be carried out at all.
policy "no-path-to-expander"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device gpu1: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm1 on gpu1 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv1 in hbm1 at 0x0 size 2 MiB owner gpu1 dtype bf16 init
region pool in hdm0 at 0x80_2000_0000 size 2 MiB owner gpu1 dtype bf16

flow spill {
  edge spill: move kv1 -> pool by gpu1.copy_done  # expect: FX-HOOK-001
  # ^ `spill` moves bytes from `gpu1` to `cxl0` but no fabric path joins them
}
