# Fixed twin of fail/kv-block-given-out-before-free.fx: the new request is given the block after
# the deferred free has run (`take1` is `after deferred_free`), so allocations alternate.
policy "kv-block-given-out-before-free"

fabric {
  device gpu0: gpu hooks [launch, copy_done, alloc, free]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region blk[b in 0..4] in hbm0 at 0x4000_0000 + b * 2 MiB size 2 MiB owner gpu0 dtype bf16 pooled
region swap[b in 0..4] in host0 at 0x1_4000_0000 + b * 2 MiB size 2 MiB owner gpu0 dtype bf16

flow preempt {
  edge take0: alloc blk[3] to gpu0 by gpu0.alloc
  edge attn0: write blk[3] by gpu0.launch after take0
  edge swap_out: move blk[3] -> swap[3] by gpu0.copy_done after attn0
  edge deferred_free: release blk[3] free by gpu0.free after swap_out
  edge take1: alloc blk[3] to gpu0 by gpu0.alloc after deferred_free
  edge attn1: write blk[3] by gpu0.launch after take1
}
