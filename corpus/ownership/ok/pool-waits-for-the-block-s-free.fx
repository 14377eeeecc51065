# Fixed twin of fail/pool-waits-for-the-wrong-free.fx: a pool of four blocks serves twelve
# requests in turn, and request i takes block i % 4 only once the block's previous holder,
# request i - 4, has freed it.
policy "pool-waits-for-the-block-s-free"

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
      edge take[i]: alloc blk[i % 4] to gpu0 by gpu0.alloc after free[i - 4]
    }
    edge use[i]: write blk[i % 4] by gpu0.launch after take[i]
    edge rd[i]: read blk[i % 4] by gpu0.launch after use[i]
    edge free[i]: release blk[i % 4] return_pool by gpu0.free after rd[i]
  }
}
