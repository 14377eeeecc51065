# Fixed twin of fail/realloc-before-free.fx: the scheduler allocates `blk[1]` to request 1 only
# after request 0 freed it (`take1` is `after free0`), so the block has one holder at a time.
policy "realloc-before-free"

fabric {
  device gpu0: gpu hooks [launch, alloc, free]
}
space hbm0 on gpu0 size 80 GiB
region blk[b in 0..4] in hbm0 at 0x4000_0000 + b * 64 KiB size 64 KiB owner gpu0 dtype bf16 pooled

flow prefill {
  edge take0: alloc blk[1] to gpu0 by gpu0.alloc
  edge attn0: write blk[1] by gpu0.launch after take0
  edge free0: release blk[1] return_pool by gpu0.free after attn0
  edge take1: alloc blk[1] to gpu0 by gpu0.alloc after free0
  edge attn1: write blk[1] by gpu0.launch after take1
  edge free1: release blk[1] return_pool by gpu0.free after attn1
}
