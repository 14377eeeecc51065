# The GPU pushes a 64 KiB KV block into a staging buffer in the DPU's memory. Both regions start
# at address 0, but in different address spaces: the same numbers are different bytes. The GPU
# writes `stage`, which the DPU owns, and nobody handed it over or could lease a write.
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
  edge attn: write kv_blk by gpu0.launch
  edge push: move kv_blk -> stage[0, +64 KiB] by gpu0.copy_done after attn  # expect: FX-OWN-001
  # ^ `push` writes `stage` from `gpu0`, which neither owns nor leases it then
}
