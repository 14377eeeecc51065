# An activation checkpoint of 4 MiB is lz4-compressed into a slot sized from the average ratio
# seen in testing (about 2:1, so 2 MiB). Incompressible input (random-looking fp16 mantissas)
# does not shrink: lz4 can even expand it, to n + n/255 + 16 bytes. The slot must be sized by the
# codec's worst-case bound, never by its average ratio.
policy "compress-average-ratio"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region act in hbm0 at 0x3000_0000 size 4 MiB owner gpu0 init
region ckpt in hdm0 at 0x80_2000_0000 size 2 MiB owner gpu0

flow checkpoint {
  edge save: move act -> ckpt by gpu0.copy_done transform compress(lz4)  # expect: FX-XF-001
  # ^ `save` can write up to 4210768 B into a 2097152 B destination: any input of 2088946 B or more overflows it (the source holds 4194304 B)
}
