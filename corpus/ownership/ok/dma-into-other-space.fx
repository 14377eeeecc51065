# Fixed twin of fail/dma-into-other-space.fx: the DPU receives the block itself (its DMA engine
# pulls it, driven by `dpu0.rx`), so the write into `stage` comes from the owner of `stage`. The
# GPU's block and the DPU's buffer share numbers, not bytes, so no ownership passes between them.
policy "dma-into-other-space"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space ddr0 on dpu0 size 16 GiB
region kv_blk in hbm0 at 0x0 size 64 KiB owner gpu0 dtype bf16
region stage in ddr0 at 0x0 size 128 KiB owner dpu0 dtype bf16

flow push {
  edge attn: write kv_blk by gpu0.launch lease kv_blk to dpu0
  edge pull: move kv_blk -> stage[0, +64 KiB] by dpu0.rx after attn
}
