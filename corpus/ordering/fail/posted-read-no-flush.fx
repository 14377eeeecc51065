# The GPU pushes a finished activation tile into the DPU's staging buffer over a `posted` PCIe
# link, then the DPU transmits it. A posted write completes at the sender before it is visible at
# the receiver, so `after push` alone does not make the bytes visible to the DPU: the transmit can
# send stale data. Only a flush of that link, after the write and before the read, makes them so.
policy "posted-read-no-flush"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link up0 = gpu0 -- dpu0 : pcie posted
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
