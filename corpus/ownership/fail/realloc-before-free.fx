# Two requests share a KV block pool, and the scheduler hands block `blk[1]` to request 1 as soon
# as request 0's attention kernel is launched, instead of after request 0 frees it. Both requests
# then hold the same block: request 1's KV overwrites request 0's before request 0 is done. A
# block is allocated to one request at a time: each `alloc` must be happens-after the release
# that ended the previous allocation.
policy "realloc-before-free"

fabric {
  device gpu0: gpu hooks [launch, alloc, free]
}
space hbm0 on gpu0 size 80 GiB
region blk[b in 0..4] in hbm0 at 0x4000_0000 + b * 64 KiB size 64 KiB owner gpu0 dtype bf16 pooled

flow prefill {
  edge take0: alloc blk[1] to gpu0 by gpu0.alloc
  edge attn0: write blk[1] by gpu0.launch after take0  # expect: FX-OWN-004
  # ^ `attn0` may use `blk[1]` while `take1` allocates it
  edge free0: release blk[1] return_pool by gpu0.free after attn0
  edge take1: alloc blk[1] to gpu0 by gpu0.alloc after take0  # expect: FX-OWN-006
  # ^ `take1` may allocate `blk[1]` before `free0` releases it
  edge attn1: write blk[1] by gpu0.launch after take1, free0  # expect: FX-OWN-004
  # ^ `attn1` may use `blk[1]` after `free0` releases it and before it is allocated again
  edge free1: release blk[1] return_pool by gpu0.free after attn1
}
