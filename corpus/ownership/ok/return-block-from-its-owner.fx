# Fixed twin of fail/return-block-from-a-lessee.fx: the DPU only reads the block under its lease;
# the GPU, which owns it, returns it to the pool once the send is done.
policy "return-block-from-its-owner"

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
  edge done: release blk return_pool by gpu0.free after tx
}
