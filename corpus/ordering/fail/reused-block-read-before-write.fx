# A paged KV cache reuses blocks across requests. Request 0 is handed block `blk[1]`, fills it
# with its KV and attends over it, then returns it to the pool. Request 1 is handed the same
# block and its attention kernel reads it at once, as if a prefix-cache hit had filled it; but
# nothing of request 1 ever wrote it. The bytes are still request 0's KV, so request 1 attends
# over another request's keys and values. The write of request 0 finished long before the read,
# yet it belongs to the previous allocation: after the `alloc`, the block holds no data of this
# request until one of its edges writes it (FX-INIT-001, same allocation).
policy "reused-block-read-before-write"

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
  edge attn1: read blk[1] by gpu0.launch after take1  # expect: FX-INIT-001
  # ^ `attn1` reads byte 0x40010000 of `blk[1]`, bf16 element 0, which no edge writes in its allocation: `fill0` wrote it before `take1` allocated it again
  edge fill1: write blk[1] by gpu0.launch after attn1
  edge free1: release blk[1] return_pool by gpu0.free after fill1
}
