# Fixed twin of fail/seal-in-place-in-controller-memory.fx: the shards go to a namespace of the
# drive (a `persistent` space) and are sealed there, so the in-place persist makes them durable.
policy "seal-in-place-in-controller-memory"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nvme0: nvme hooks [sq_doorbell, completion, dma_done]
  link gpu0 -- nvme0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space ns1 on nvme0 size 1 TiB persistent
region params in hbm0 at 0x4000_0000 size 4 MiB owner gpu0 init
region shard in ns1 at 0x0 size 4 MiB owner gpu0

flow checkpoint {
  edge save: move params -> shard by gpu0.copy_done
  edge seal: read shard by gpu0.copy_done after save transform checksum(crc32c) |> persist
}
