# A vLLM-style KV block pool shared by two prefill requests. Request 0 writes its KV into block
# `blk[1]`, leases it to the DPU, which sends it to the decode node, and only once the send is
# done does the GPU return the block to the pool. Request 1 then allocates the same block and
# writes its own KV there. The bytes are reused, but every access belongs to one allocation:
# request 0's accesses come after the block was handed out to it and before its release, and
# request 1's after its `alloc`. Lifetimes: a release ends an allocation, an `alloc` begins the
# next one, and each use is checked against the allocation it is happens-before-inside.
policy "block-pool-reuse"

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
  edge send0: read blk[1] by dpu0.tx after attn0
  edge free0: release blk[1] return_pool by gpu0.free after send0
  edge take1: alloc blk[1] to gpu0 by gpu0.alloc after free0
  edge attn1: write blk[1] by gpu0.launch after take1 lease blk[1] to dpu0
  edge send1: read blk[1] by dpu0.tx after attn1
  edge free1: release blk[1] return_pool by gpu0.free after send1
}
