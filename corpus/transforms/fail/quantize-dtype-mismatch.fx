# The KV cache holds bf16, but the spill's quantize step was written for fp16 input
# (`quantize(fp16 -> fp8)`). Both are 16-bit, so sizes add up, yet every value would be decoded
# with the wrong exponent width. The dtype chain must agree from the source region through every
# quantize step to the destination region.
policy "quantize-dtype-mismatch"

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
  edge spill: move kv -> kv8 by gpu0.copy_done transform quantize(fp16 -> fp8, group 128, scale f32)  # expect: FX-XF-003
  # ^ `spill`: quantize expects `fp16` but the source holds `bf16`
}
