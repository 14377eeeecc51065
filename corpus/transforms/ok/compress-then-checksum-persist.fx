# Fixed twin of fail/checksum-before-compress.fx: compress first, then checksum the compressed
# bytes, then persist them into a `persistent` space. The checksum covers exactly the bytes
# stored. The 2 MiB slot holds deflate's worst case for 1 MiB of input (compressBound: 1048909 B).
policy "compress-then-checksum-persist"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space pmem0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent checksum crc32c
region kv in hbm0 at 0x0 size 1 MiB owner gpu0 init
region saved in pmem0 at 0x80_2000_0000 size 2 MiB owner gpu0

flow spill {
  edge keep: move kv -> saved by gpu0.copy_done transform compress(deflate) |> checksum(crc32c) |> persist
}
