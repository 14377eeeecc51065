# Incident (checkpointing): a checkpoint writer packs zstd-compressed shards back to back in one
# file, with each shard's slot sized from the compression ratio measured on earlier runs
# (about 0.6). Optimizer state with high-entropy mantissas barely compresses; zstd can even
# grow it a little, so a shard overruns its slot into the next one.
# Fix: size each slot for the codec's worst-case bound (ZSTD_COMPRESSBOUND), not its average.
policy "ckpt-shard-slots-sized-by-average-ratio"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nvme0: nvme hooks [sq_doorbell, completion, dma_done]
  link gpu0 -- nvme0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space ns1 on nvme0 size 1 TiB persistent
region state[s in 0..4] in hbm0 at 0x4000_0000 + s * 8 MiB size 8 MiB owner gpu0 init
region slot[s in 0..4] in ns1 at s * 5 MiB size 5 MiB owner gpu0

flow checkpoint {
  for s in 0..4 {
    edge save[s]: move state[s] -> slot[s] by gpu0.copy_done  # expect: FX-XF-001
    # ^ `save[0]` can write up to 8421376 B into a 5242880 B destination: any input of 5222481 B or more overflows it (the source holds 8388608 B)
        transform compress(zstd) |> checksum(crc32c) |> persist
  }
}
