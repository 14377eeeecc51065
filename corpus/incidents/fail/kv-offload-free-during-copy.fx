# Incident (KV-cache offload): a request finishes and the engine returns its GPU KV blocks to
# the free pool while the asynchronous offload of those blocks to host memory (a KV connector's
# save on a copy stream) is still reading them. The next request is given the same block and
# its prefill overwrites it, so the host copy holds a mix of two requests' KV.
# Fix: return a block to the pool only once its offload copy has completed.
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
  edge offload0: move blk[2] -> host_blk[2] by gpu0.copy_done after attn0 stream copy  # expect: FX-OWN-004, FX-INIT-001
  # ^ `offload0` reads byte 0x40400000 of `blk[2]`, bf16 element 0, which no edge writes in its allocation: `attn0` wrote it before `take1` allocated it again
  # ^ `offload0` may use `blk[2]` while `done0` releases it
  edge done0: release blk[2] return_pool by gpu0.free after attn0 stream compute
  edge take1: alloc blk[2] to gpu0 by gpu0.alloc after done0
  edge attn1: write blk[2] by gpu0.launch after take1 stream compute  # expect: FX-ORD-002
  # ^ data race (read-write) on `blk[2]`: `offload0` and `attn1` may overlap in time
}
