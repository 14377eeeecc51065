# A KV stream to a CXL expander asks for in-order delivery: the consumer assumes block k lands
# before block k+1. The short path through switch `sw0` is ordered, but the fabric also has a
# second switch whose downstream link is `unordered`, and the stream pins no route, so some blocks
# may take the detour and land out of order. The requirement holds only if every path that may
# carry the bytes is ordered.
policy "in-order-with-an-unordered-detour"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device sw0: cxl_switch hooks [route]
  device sw1: cxl_switch hooks [route]
  device cxl0: cxl_mem hooks [near_mem]
  link a0 = gpu0 -- sw0 : cxl ordered
  link b0 = sw0 -- cxl0 : cxl ordered
  link a1 = gpu0 -- sw1 : cxl ordered
  link b1 = sw1 -- cxl0 : cxl unordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 8 MiB owner gpu0 dtype bf16 init
region pool in hdm0 at 0x80_2000_0000 size 8 MiB owner gpu0 dtype bf16

flow stream_kv {
  edge stream: move kv -> pool by gpu0.copy_done require in_order  # expect: FX-ORD-004
  # ^ `stream` requires in-order delivery from `gpu0` to `cxl0`, but the path `a1` -> `b1` crosses `b1` (unordered)
}
