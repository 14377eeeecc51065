# Fixed twin of fail/compress-average-ratio.fx: the checkpoint slot is sized by LZ4_COMPRESSBOUND
# for 4 MiB of input: 4194304 + 4194304/255 + 16 = 4210768 B, rounded up to 4 MiB + 17 KiB
# (4211712 B). Even incompressible activations fit; the space saved on average is simply unused.
policy "compress-worst-case"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region act in hbm0 at 0x3000_0000 size 4 MiB owner gpu0 init
region ckpt in hdm0 at 0x80_2000_0000 size 4 MiB + 17 KiB owner gpu0

flow checkpoint {
  edge save: move act -> ckpt by gpu0.copy_done transform compress(lz4)
}
