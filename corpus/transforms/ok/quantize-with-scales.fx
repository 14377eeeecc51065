# Fixed twin of fail/quantize-dtype-mismatch.fx: the quantize step reads bf16, as the KV region
# holds, and writes fp8 into an fp8 region. With `group 128` the destination holds the data and its
# scales: 32768 elements x 1 B + 256 groups x 4 B (f32) = 33 KiB.
policy "quantize-with-scales"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 64 KiB owner gpu0 dtype bf16 init
region kv8 in hdm0 at 0x80_2000_0000 size 33 KiB owner gpu0 dtype fp8

flow spill {
  edge spill: move kv -> kv8 by gpu0.copy_done transform quantize(bf16 -> fp8, group 128, scale f32)
}
