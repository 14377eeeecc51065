# Fixed twin of fail/ckpt-shard-slots-sized-by-average-ratio.fx: each slot holds zstd's worst case for
# an 8 MiB shard (8 MiB + 32 KiB, ZSTD_COMPRESSBOUND), rounded up to 8 MiB + 64 KiB.
policy "ckpt-shard-slots-sized-by-average-ratio"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nvme0: nvme hooks [sq_doorbell, completion, dma_done]
  link gpu0 -- nvme0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space ns1 on nvme0 size 1 TiB persistent
region state[s in 0..4] in hbm0 at 0x4000_0000 + s * 8 MiB size 8 MiB owner gpu0 init
region slot[s in 0..4] in ns1 at s * 8256 KiB size 8256 KiB owner gpu0

flow checkpoint {
  for s in 0..4 {
    edge save[s]: move state[s] -> slot[s] by gpu0.copy_done transform compress(zstd) |> checksum(crc32c) |> persist
  }
}
