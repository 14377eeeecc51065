# Fixed twin of fail/ckpt-commit-marker-before-all-ranks.fx: the marker is written after every rank's
# shard (`commit` is `after save0, save1`, a barrier), so a loader that sees it reads complete shards.
policy "ckpt-commit-marker-before-all-ranks"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device gpu1: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [launch]
  device nvme0: nvme hooks [sq_doorbell, completion, dma_done]
  link gpu0 -- cpu0 : pcie ordered
  link gpu1 -- cpu0 : pcie ordered
  link cpu0 -- nvme0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space hbm1 on gpu1 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
space ns1 on nvme0 size 1 TiB persistent
region p0 in hbm0 at 0x4000_0000 size 4 MiB owner gpu0 init
region p1 in hbm1 at 0x4000_0000 size 4 MiB owner gpu1 init
region shard0 in ns1 at 0x0 size 4 MiB owner gpu0
region shard1 in ns1 at 4 MiB size 4 MiB owner gpu1
region marker in host0 at 0x1_0000_0000 size 4 KiB owner gpu0
region restore in host0 at 0x1_4000_0000 size 8 MiB owner cpu0
map latest: hash<u32, u32>[16] class linearizable

flow checkpoint {
  edge save0: move p0 -> shard0 by gpu0.copy_done transform checksum(crc32c) |> persist handoff shard0: gpu0 -> cpu0
  edge save1: move p1 -> shard1 by gpu1.copy_done transform checksum(crc32c) |> persist handoff shard1: gpu1 -> cpu0
  edge commit: write marker by gpu0.launch after save0, save1 map_write latest[0] = 7
  edge load: move shard1 -> restore[4 MiB, +4 MiB] by cpu0.launch after commit guard latest[0] == 7
}
