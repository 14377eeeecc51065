# Checkpoint shards are copied into the NVMe controller memory buffer (CMB), then sealed where
# they lie: an in-place `read ... transform checksum |> persist` edge declares them durable. The
# CMB is volatile (its space is not `persistent`), so the sealed checkpoint does not survive a
# power loss. The persisted space of an in-place edge is its source's.
policy "seal-in-place-in-controller-memory"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nvme0: nvme hooks [sq_doorbell, completion, dma_done]
  link gpu0 -- nvme0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space cmb0 on nvme0 size 256 MiB
region params in hbm0 at 0x4000_0000 size 4 MiB owner gpu0 init
region shard in cmb0 at 0x0 size 4 MiB owner gpu0

flow checkpoint {
  edge save: move params -> shard by gpu0.copy_done
  edge seal: read shard by gpu0.copy_done after save transform checksum(crc32c) |> persist  # expect: FX-XF-003
  # ^ `seal`: persist into `cmb0`, which is not declared `persistent`: its bytes do not survive a power loss or reboot
}
