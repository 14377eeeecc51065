# Fixed twin of fail/in-order-with-an-unordered-detour.fx: the stream is pinned to the ordered path
# through `sw0` with `via a0, b0` (in path order), so the unordered detour through `sw1` never
# carries it and in-order delivery holds.
policy "in-order-pinned-route"

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
  edge stream: move kv -> pool by gpu0.copy_done require in_order via a0, b0
}
