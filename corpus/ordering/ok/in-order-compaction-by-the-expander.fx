# The fix of ordering/fail/in-order-compaction-through-unordered-switch.fx: the expander's own
# near-memory engine compacts the KV blocks, so the bytes never leave the device and no link, in
# order or not, carries them. The GPU posts the command to the expander's mailbox and lends it the
# blocks to read; the compacted pool is the expander's.
policy "in-order-compaction-by-the-expander"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device sw0: cxl_switch hooks [route]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- sw0 : cxl ordered
  link sw0 -- cxl0 : cxl unordered
}
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region frag in hdm0 at 0x80_2000_0000 size 8 MiB owner gpu0 dtype bf16 init
region pool in hdm0 at 0x80_2080_0000 size 8 MiB owner cxl0 dtype bf16
region mbox in hdm0 at 0x80_2100_0000 size 64 B owner gpu0 dtype uint8

flow compact {
  edge lend: write mbox by gpu0.launch lease frag to cxl0
  edge compact: move frag -> pool by cxl0.near_mem after lend require in_order
}
