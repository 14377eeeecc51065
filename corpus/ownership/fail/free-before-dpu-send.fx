# The block pool of ok/block-pool-reuse.fx, with request 0's free moved before the DPU's send of
# its block: the GPU returns `blk[1]` to the pool as soon as attention is done, and request 1
# allocates and overwrites it. The DPU's send may still be reading the block, so the decode node
# receives request 1's KV (or a mix) under request 0's name; request 1's `alloc` also ends the
# DPU's lease, and its write races the send. A use must lie inside one
# allocation: after the `alloc` that hands the block out and before the release that ends it.
policy "free-before-dpu-send"

fabric {
  device gpu0: gpu hooks [launch, alloc, free]
  device dpu0: dpu hooks [tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region blk[b in 0..4] in hbm0 at 0x4000_0000 + b * 64 KiB size 64 KiB owner gpu0 dtype bf16 pooled

flow prefill {
  edge take0: alloc blk[1] to gpu0 by gpu0.alloc
  edge attn0: write blk[1] by gpu0.launch after take0 lease blk[1] to dpu0
  edge send0: read blk[1] by dpu0.tx after attn0  # expect: FX-OWN-004, FX-OWN-001, FX-INIT-001
  # ^ `send0` reads byte 0x40010000 of `blk[1]`, bf16 element 0, which no edge writes in its allocation: `attn0` wrote it before `take1` allocated it again
  # ^ `send0` reads `blk[1]` from `dpu0`, which neither owns nor leases it then
  # ^ `send0` may use `blk[1]` while `free0` releases it
  edge free0: release blk[1] return_pool by gpu0.free after attn0
  edge take1: alloc blk[1] to gpu0 by gpu0.alloc after free0
  edge attn1: write blk[1] by gpu0.launch after take1 lease blk[1] to dpu0  # expect: FX-ORD-002
  # ^ data race (read-write) on `blk[1]`: `send0` and `attn1` may overlap in time
  edge send1: read blk[1] by dpu0.tx after attn1
  edge free1: release blk[1] return_pool by gpu0.free after send1
}
