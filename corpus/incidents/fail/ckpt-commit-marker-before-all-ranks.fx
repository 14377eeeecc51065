# Incident (checkpointing): in a distributed checkpoint, rank 0 writes the "latest step" marker
# once its own shard is written, instead of after every rank has reported success. A job that
# restarts at that moment (or a loader polling the marker) sees the step as complete and loads
# rank 1's shard while rank 1 is still writing it.
# Fix: write the marker only after a barrier over every rank's shard write.
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
  edge commit: write marker by gpu0.launch after save0 map_write latest[0] = 7
  edge load: move shard1 -> restore[4 MiB, +4 MiB] by cpu0.launch after commit guard latest[0] == 7  # expect: FX-ORD-002, FX-OWN-001, FX-OWN-002, FX-INIT-001
  # ^ data race (write-read) on `shard1`: `save1` and `load` may overlap in time
  # ^ `load` reads byte 0x400000 of `shard1`, which no edge writes before it
  # ^ `load` reads `shard1` from `cpu0`, which neither owns nor leases it then
  # ^ `load` accesses `shard1` while `save1` is handing it off
}
