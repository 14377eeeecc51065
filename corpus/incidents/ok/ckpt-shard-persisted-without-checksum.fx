# Fixed twin of fail/ckpt-shard-persisted-without-checksum.fx: the compressed bytes are checksummed
# before they are persisted, so a load can tell a torn or corrupted shard.
policy "ckpt-shard-persisted-without-checksum"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nvme0: nvme hooks [sq_doorbell, completion, dma_done]
  link gpu0 -- nvme0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space ns1 on nvme0 size 1 TiB persistent checksum crc32c  # the restore path verifies every shard
region params in hbm0 at 0x4000_0000 size 4 MiB owner gpu0 init
region shard in ns1 at 0x0 size 4160 KiB owner gpu0

flow checkpoint {
  edge save: move params -> shard by gpu0.copy_done transform compress(zstd) |> checksum(crc32c) |> persist
}
