# Fixed twin of fail/in-order-over-unordered-link.fx: both hops of the path from the GPU through the
# CXL switch to the expander are `ordered` (FIFO completion), so an edge that requires in-order
# delivery can get it.
policy "in-order-over-ordered-links"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device sw0: cxl_switch hooks [route]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- sw0 : cxl ordered
  link sw0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 8 MiB owner gpu0 dtype bf16 init
region pool in hdm0 at 0x80_2000_0000 size 8 MiB owner gpu0 dtype bf16

flow stream_kv {
  edge stream: move kv -> pool by gpu0.copy_done require in_order
}
