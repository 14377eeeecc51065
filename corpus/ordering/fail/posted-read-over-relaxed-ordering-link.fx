# The GPU pushes activations into the DPU's memory over a PCIe link that runs with Relaxed
# Ordering (declared `unordered`: a write may pass another), and the DPU transmits them with no
# flush in between. Relaxed Ordering changes which writes may pass which; it does not make a
# memory write complete at the receiver: a PCIe Memory Write is a posted request whatever the
# ordering attributes (PCIe Base Specification, section 2.4.1), so the push may still be in
# flight when the DPU reads (vocab.POSTED_WRITE_KINDS). Flush the link after the push, as in
# ok/posted-read-after-flush.fx; with Relaxed Ordering no read-back, entry or host read can
# stand in for the flush.
policy "posted-read-over-relaxed-ordering-link"

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
  edge xmit: read stage by dpu0.tx after push  # expect: FX-ORD-003
  # ^ `xmit` reads bytes that `push` wrote over posted link `up0` with no flush in between
}
