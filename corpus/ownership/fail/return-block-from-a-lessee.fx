# The GPU lends a KV block to the DPU, which reads it to send it to the decode node, and then the
# DPU's completion handler returns the block to the GPU's pool. A lease grants reads only: the DPU
# never owned the block, so it frees memory another device's allocator still tracks (the GPU can
# hand the same block out twice). Only the owner returns a block to its pool.
policy "return-block-from-a-lessee"

fabric {
  device gpu0: gpu hooks [launch, copy_done, free]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region blk in hbm0 at 0x4000_0000 size 1 MiB owner gpu0 dtype bf16

flow send {
  edge fill: write blk by gpu0.launch lease blk to dpu0
  edge tx: read blk by dpu0.tx after fill
  edge done: release blk return_pool by dpu0.dma_done after tx  # expect: FX-OWN-001
  # ^ `done` releases `blk` from `dpu0`, which does not own it then
}
