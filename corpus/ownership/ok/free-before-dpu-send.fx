# Fixed twin of fail/free-before-dpu-send.fx: request 0 frees `blk[1]` only after the DPU has
# sent it (`free0` is `after send0`); request 1 allocates it after that free.
policy "free-before-dpu-send"

fabric {
  device gpu0: gpu hooks [launch, alloc, free]
  device dpu0: dpu hooks [tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region blk[b in 0..4] in hbm0 at 0x4000_0000 + b * 64 KiB size 64 KiB owner gpu0 dtype bf16 pooled

flow prefill {
  edge take0: alloc blk[1] to gpu0 by gpu0.alloc
  edge attn0: write blk[1] by gpu0.launch after take0 lease blk[1] to dpu0
  edge send0: read blk[1] by dpu0.tx after attn0
  edge free0: release blk[1] return_pool by gpu0.free after send0
  edge take1: alloc blk[1] to gpu0 by gpu0.alloc after free0
  edge attn1: write blk[1] by gpu0.launch after take1 lease blk[1] to dpu0
  edge send1: read blk[1] by dpu0.tx after attn1
  edge free1: release blk[1] return_pool by gpu0.free after send1
}
