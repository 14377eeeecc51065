# A DMA engine on the DPU copies a batch of four KV blocks into GPU memory and posts one
# completion entry for the batch. It posts the entry as soon as the first copy is done, while the
# other three are still in flight. `notifies` names the transfers the entry reports, but a
# notification carries happens-before only from transfers that have completed: the GPU kernel
# woken by it is ordered after the first copy only, and races with the other three.
policy "notify-batch-in-flight"

fabric {
  device gpu0: gpu hooks [launch]
  device dpu0: dpu hooks [dma_done, tx]
  link dpu0 -- gpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space dram0 on dpu0 base 0x10_0000_0000 size 16 GiB
region staged in dram0 at 0x10_0000_0000 size 256 KiB owner dpu0 init
region kv in hbm0 at 0x4000_0000 size 256 KiB owner dpu0
region cq in dram0 at 0x10_0100_0000 size 4 KiB owner dpu0

flow load {
  for b in 0..4 {
    edge copy[b]: move staged[b * 64 KiB, +64 KiB] -> kv[b * 64 KiB, +64 KiB] by dpu0.dma_done
  }
  edge done: write cq[0, +16] by dpu0.tx after copy[0] notifies copy[*] lease kv to gpu0  # expect: FX-ORD-006
  # ^ `done` notifies `copy[1]`, but may start while `copy[1]` is still in flight
  edge attn: read kv by gpu0.launch after done  # expect: FX-ORD-002, FX-INIT-001
  # ^ data race (write-read) on `kv`: `copy[1]` and `attn` may overlap in time
  # ^ `attn` reads byte 0x40010000 of `kv`, which no edge writes before it
}
