# Fixed twin of fail/posted-read-over-relaxed-ordering-link.fx: the GPU flushes its Relaxed
# Ordering link (`unordered`, still posted) after the push, and the DPU transmits only after the
# flush, so it reads the new bytes.
policy "posted-read-after-flush-relaxed-ordering"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link up0 = gpu0 -- dpu0 : pcie unordered
}
space hbm0 on gpu0 size 80 GiB
space dram0 on dpu0 base 0x10_0000_0000 size 16 GiB
region act in hbm0 at 0x3000_0000 size 4 MiB owner gpu0 dtype bf16 init
region stage in dram0 at 0x10_0800_0000 size 4 MiB owner gpu0 dtype bf16

flow send {
  edge push: move act -> stage by gpu0.copy_done handoff stage: gpu0 -> dpu0
  edge drain: flush up0 by gpu0.launch after push
  edge xmit: read stage by dpu0.tx after drain
}
