# A DPU pulls a KV block from GPU 0's memory into its own DRAM with a DMA read (GPU 0 leases the
# block to it first), and GPU 1 then reads the staged copy. The block crossed the posted link
# `up0` as completions of the DPU's read requests, and the DPU's engine wrote them into its own
# memory before `pull` finished, so GPU 1 needs no flush of `up0` (specs/obligations.md
# section 1, posted rule: a pull writes only its driver's memory). The same block pushed by GPU 0
# is ordering/fail/posted-pushed-block-read-elsewhere.fx.
policy "posted-pulled-block-read-elsewhere"

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
region sqe in hbm0 at 0x2000_0000 size 64 B owner gpu0 dtype uint8
region stage in dram at 0x0 size 2 MiB owner dpu0 dtype bf16

flow f {
  edge submit: write sqe by gpu0.launch lease kv to dpu0
  edge pull: move kv -> stage by dpu0.dma_done after submit lease stage to gpu1
  edge use: read stage by gpu1.launch after pull
}
