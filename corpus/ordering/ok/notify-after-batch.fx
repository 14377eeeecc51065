# The fix of fail/notify-batch-in-flight.fx: the completion entry waits for every copy of the
# batch (`after copy[*]`), so the kernel woken by it gets happens-before from all four transfers.
policy "notify-after-batch"

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
  edge done: write cq[0, +16] by dpu0.tx after copy[*] notifies copy[*] lease kv to gpu0
  edge attn: read kv by gpu0.launch after done
}
