# A KV stream to a CXL expander asks for in-order delivery (`require in_order`): the near-memory
# consumer assumes block k lands before block k+1. But the only path crosses an `unordered` CXL
# link through a switch, which may complete transfers out of submission order, so the requirement
# cannot be met. Route over ordered links, or order the consumers explicitly with `after`.
policy "in-order-over-unordered-link"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device sw0: cxl_switch hooks [route]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- sw0 : cxl ordered
  link sw0 -- cxl0 : cxl unordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 8 MiB owner gpu0 dtype bf16 init
region pool in hdm0 at 0x80_2000_0000 size 8 MiB owner gpu0 dtype bf16

flow stream_kv {
  edge stream: move kv -> pool by gpu0.copy_done require in_order  # expect: FX-ORD-004
  # ^ `stream` requires in-order delivery from `gpu0` to `cxl0`, but the path `gpu0--sw0` -> `sw0--cxl0` crosses `sw0--cxl0` (unordered)
}
