# Incident (collectives): a gradient tensor is reduced by an asynchronous all-reduce on the
# communication stream, and the training loop drops its last reference right after the launch.
# The caching allocator only tracks the stream the tensor was made on, so it recycles the block
# for a new tensor of the next step while the all-reduce is still reading it (the missing
# `record_stream` or wait).
# Fix: return the block to the allocator only after the all-reduce has finished with it.
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
  edge allreduce: reduce(sum) blk[0] -> acc by gpu0.launch after grad stream comm  # expect: FX-OWN-004, FX-INIT-001
  # ^ `allreduce` reads byte 0x40000000 of `blk[0]`, fp32 element 0, which no edge writes in its allocation: `grad` wrote it before `take1` allocated it again
  # ^ `allreduce` may use `blk[0]` while `drop` releases it
  edge drop: release blk[0] return_pool by gpu0.free after grad stream compute
  edge take1: alloc blk[0] to gpu0 by gpu0.alloc after drop
  edge next: write blk[0] by gpu0.launch after take1 stream compute  # expect: FX-ORD-002
  # ^ data race (read-write) on `blk[0]`: `allreduce` and `next` may overlap in time
}
