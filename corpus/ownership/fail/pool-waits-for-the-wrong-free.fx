# A pool of four blocks serves twelve requests in turn: request i takes block i % 4 and must wait
# until the block's previous holder, request i - 4, has freed it. The wait is written off by one,
# `after free[i - 3]`: request 4 waits for request 1, which freed another block, so it may take
# block 0 while request 0 still writes and reads it. Every request from the fifth on has the bug,
# so the fix is the loop's own line, `after free[i - 4]`, not one request's.
# Fixed twin: ok/pool-waits-for-the-block-s-free.fx.
policy "pool-waits-for-the-wrong-free"

fabric {
  device gpu0: gpu hooks [launch, alloc, free]
}
space hbm0 on gpu0 size 80 GiB
region blk[b in 0..4] in hbm0 at 0x4000_0000 + b * 64 KiB size 64 KiB owner gpu0 pooled

flow serve {
  for i in 0..12 {
    if i < 4 {
      edge take[i]: alloc blk[i % 4] to gpu0 by gpu0.alloc
    } else {
      edge take[i]: alloc blk[i % 4] to gpu0 by gpu0.alloc after free[i - 3]  # expect: FX-OWN-006
      # ^ `take[4]` may allocate `blk[0]` before `free[0]` releases it
    }
    edge use[i]: write blk[i % 4] by gpu0.launch after take[i]  # expect: FX-ORD-002, FX-OWN-004
    # ^ data race (write-write) on `blk[0]`: `use[0]` and `use[4]` may overlap in time
    # ^ data race (read-write) on `blk[0]`: `rd[0]` and `use[4]` may overlap in time
    # ^ `use[0]` may use `blk[0]` while `take[8]` allocates it
    edge rd[i]: read blk[i % 4] by gpu0.launch after use[i]  # expect: FX-ORD-002, FX-INIT-001, FX-OWN-004
    # ^ data race (write-read) on `blk[0]`: `use[0]` and `rd[4]` may overlap in time
    # ^ `rd[0]` reads byte 0x40000000 of `blk[0]`, which no edge writes in its allocation: `use[0]` wrote it before `take[8]` allocated it again
    # ^ `rd[0]` may use `blk[0]` while `take[8]` allocates it
    edge free[i]: release blk[i % 4] return_pool by gpu0.free after rd[i]
  }
}
