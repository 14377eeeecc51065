# The push twin of ordering/ok/posted-pulled-block-read-elsewhere.fx: GPU 0's copy engine writes
# the KV block into the DPU's DRAM itself. Those writes are posted on `up0`: `push` finishes at
# GPU 0 while they may still be on their way, and GPU 1 reads the staged copy with no flush of
# `up0` in between. Fix: `flush up0` on `push` (or a flush edge `after push` that `use` waits for).
policy "posted-pushed-block-read-elsewhere"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  device gpu1: gpu hooks [launch, copy_done]
  link up0 = gpu0 -- dpu0 : pcie posted
  link up1 = gpu1 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space dram on dpu0 size 16 GiB
region kv in hbm0 at 0x1000_0000 size 2 MiB owner gpu0 dtype bf16 init
region stage in dram at 0x0 size 2 MiB owner gpu0 dtype bf16

flow f {
  edge push: move kv -> stage by gpu0.copy_done lease stage to gpu1
  edge use: read stage by gpu1.launch after push  # expect: FX-ORD-003
  # ^ `use` reads bytes that `push` wrote over posted link `up0` with no flush in between
}
