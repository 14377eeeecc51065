# Fixed twin of fail/collective-buffer-recycled-before-allreduce.fx: the block goes back to the
# allocator after the all-reduce (`drop` is `after allreduce`, what `record_stream` achieves).
policy "collective-buffer-recycled-before-allreduce"

fabric {
  device gpu0: gpu hooks [launch, copy_done, alloc, free]
}
space hbm0 on gpu0 size 80 GiB
region blk[b in 0..4] in hbm0 at 0x4000_0000 + b * 16 MiB size 16 MiB owner gpu0 dtype fp32 pooled
region acc in hbm0 at 0x8000_0000 size 16 MiB owner gpu0 dtype fp32 init

flow step {
  edge take0: alloc blk[0] to gpu0 by gpu0.alloc
  edge grad: write blk[0] by gpu0.launch after take0 stream compute
  edge allreduce: reduce(sum) blk[0] -> acc by gpu0.launch after grad stream comm
  edge drop: release blk[0] return_pool by gpu0.free after grad, allreduce stream compute
  edge take1: alloc blk[0] to gpu0 by gpu0.alloc after drop
  edge next: write blk[0] by gpu0.launch after take1 stream compute
}
