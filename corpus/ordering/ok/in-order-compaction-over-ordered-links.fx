# The other fix of ordering/fail/in-order-compaction-through-unordered-switch.fx: the GPU's copy
# engine still compacts the KV blocks inside the CXL expander, but every link between the two is
# `ordered`. The bytes go into the GPU's engine and out again, and both legs, from the expander to
# the GPU and back, cross ordered links only, so the blocks land in submission order.
policy "in-order-compaction-over-ordered-links"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device sw0: cxl_switch hooks [route]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- sw0 : cxl ordered
  link sw0 -- cxl0 : cxl ordered
}
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region frag in hdm0 at 0x80_2000_0000 size 8 MiB owner gpu0 dtype bf16 init
region pool in hdm0 at 0x80_2080_0000 size 8 MiB owner gpu0 dtype bf16

flow compact {
  edge compact: move frag -> pool by gpu0.copy_done require in_order
}
