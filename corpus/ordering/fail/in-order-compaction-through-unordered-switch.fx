# A GPU's copy engine compacts KV blocks inside a CXL expander (source and destination both in its
# memory window) and asks for in-order delivery: the near-memory consumer assumes block k lands
# before block k+1. The bytes do not stay in the expander: the copy engine reads them in over the
# fabric and writes them back out, and the only path between the GPU and the expander crosses an
# `unordered` switch hop, which may complete the writes out of submission order.
# Fix: ordering/ok/in-order-compaction-by-the-expander.fx (the expander's own engine moves them),
# or ordering/ok/in-order-compaction-over-ordered-links.fx (ordered links on both legs).
policy "in-order-compaction-through-unordered-switch"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device sw0: cxl_switch hooks [route]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- sw0 : cxl ordered
  link sw0 -- cxl0 : cxl unordered
}
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region frag in hdm0 at 0x80_2000_0000 size 8 MiB owner gpu0 dtype bf16 init
region pool in hdm0 at 0x80_2080_0000 size 8 MiB owner gpu0 dtype bf16

flow compact {
  edge compact: move frag -> pool by gpu0.copy_done require in_order  # expect: FX-ORD-004
  # ^ `compact` requires in-order delivery from `cxl0` to `gpu0` (its bytes go into `gpu0`'s engine, which moves them), but the path `sw0--cxl0` -> `gpu0--sw0` crosses `sw0--cxl0` (unordered)
}
