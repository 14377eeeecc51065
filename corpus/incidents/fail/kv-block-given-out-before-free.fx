# Incident (KV-cache offload): the engine defers freeing a preempted request's KV block until its
# swap-out copy completes (the free is queued behind the copy), but the block manager already
# counts the block as free and hands it to a new request as soon as the swap-out is issued. The
# block is then held by two requests at once: the new request's allocation begins before the old
# one has ended.
# Fix: give the block out again only after the deferred free has run.
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
  edge swap_out: move blk[3] -> swap[3] by gpu0.copy_done after attn0  # expect: FX-OWN-004, FX-INIT-001
  # ^ `swap_out` reads byte 0x40600000 of `blk[3]`, bf16 element 0, which no edge writes in its allocation: `attn0` wrote it before `take1` allocated it again
  # ^ `swap_out` may use `blk[3]` while `take1` allocates it
  edge deferred_free: release blk[3] free by gpu0.free after swap_out
  edge take1: alloc blk[3] to gpu0 by gpu0.alloc after attn0  # expect: FX-OWN-006
  # ^ `take1` may allocate `blk[3]` before `deferred_free` releases it
  edge attn1: write blk[3] by gpu0.launch after take1, deferred_free  # expect: FX-OWN-004
  # ^ `attn1` may use `blk[3]` after `deferred_free` releases it and before it is allocated again
}
