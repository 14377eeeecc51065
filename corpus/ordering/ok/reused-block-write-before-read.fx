# The fixed twin of `reused-block-read-before-write`: request 1 fills the reused block `blk[1]`
# with its own KV (the prefill kernel) before its attention kernel reads it. Every byte the read
# touches is written after the `alloc` that hands the block to request 1, so it is this
# request's data, not what request 0 left behind (FX-INIT-001, same allocation).
policy "reused-block-write-before-read"

fabric {
  device gpu0: gpu hooks [launch, alloc, free]
}
space hbm0 on gpu0 size 80 GiB
region blk[b in 0..4] in hbm0 at 0x4000_0000 + b * 64 KiB size 64 KiB owner gpu0 dtype bf16 pooled

flow serve {
  edge take0: alloc blk[1] to gpu0 by gpu0.alloc
  edge fill0: write blk[1] by gpu0.launch after take0
  edge attn0: read blk[1] by gpu0.launch after fill0
  edge free0: release blk[1] return_pool by gpu0.free after attn0
  edge take1: alloc blk[1] to gpu0 by gpu0.alloc after free0
  edge fill1: write blk[1] by gpu0.launch after take1
  edge attn1: read blk[1] by gpu0.launch after fill1
  edge free1: release blk[1] return_pool by gpu0.free after attn1
}
