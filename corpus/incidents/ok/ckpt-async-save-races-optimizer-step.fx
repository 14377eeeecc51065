# Fixed twin of fail/ckpt-async-save-races-optimizer-step.fx: the next optimizer step waits for the
# staging copy (`step1` is `after stage`); only the write to NVMe overlaps training.
policy "ckpt-async-save-races-optimizer-step"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [launch, dma_done]
  device nvme0: nvme hooks [sq_doorbell, completion, dma_done]
  link gpu0 -- cpu0 : pcie ordered
  link cpu0 -- nvme0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
space ns1 on nvme0 size 1 TiB persistent
region params in hbm0 at 0x4000_0000 size 64 MiB owner gpu0 dtype bf16
region staged in host0 at 0x1_4000_0000 size 64 MiB owner gpu0 dtype bf16
region shard in ns1 at 0x0 size 64 MiB owner gpu0 dtype bf16

flow train {
  edge step0: write params by gpu0.launch stream compute
  edge stage: move params -> staged by gpu0.copy_done stream ckpt after step0
  edge step1: write params by gpu0.launch stream compute after stage
  edge write_out: move staged -> shard by gpu0.copy_done stream ckpt after stage transform checksum(crc32c) |> persist
}
