# Fixed twin of fail/kv-offload-free-during-copy.fx: the block goes back to the pool after its
# offload copy (`done0` is `after offload0`), and the next request is given it after that.
policy "kv-offload-free-during-copy"

fabric {
  device gpu0: gpu hooks [launch, copy_done, alloc, free]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region blk[b in 0..4] in hbm0 at 0x4000_0000 + b * 2 MiB size 2 MiB owner gpu0 dtype bf16 pooled
region host_blk[b in 0..4] in host0 at 0x1_4000_0000 + b * 2 MiB size 2 MiB owner gpu0 dtype bf16

flow step {
  edge take0: alloc blk[2] to gpu0 by gpu0.alloc
  edge attn0: write blk[2] by gpu0.launch after take0 stream compute
  edge offload0: move blk[2] -> host_blk[2] by gpu0.copy_done after attn0 stream copy
  edge done0: release blk[2] return_pool by gpu0.free after attn0, offload0 stream compute
  edge take1: alloc blk[2] to gpu0 by gpu0.alloc after done0
  edge attn1: write blk[2] by gpu0.launch after take1 stream compute
}
