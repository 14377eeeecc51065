# The DPU sends a finished KV block to a remote decode node straight out of GPU memory. The GPU
# owns the block and never granted the DPU anything, so the DPU reads memory it neither owns nor
# leases: nothing stops the GPU from rewriting or freeing the block mid-send. Grant a read lease
# (or hand the block off) on an edge that happens-before the read.
policy "dpu-reads-unleased-kv"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region kv_blk in hbm0 at 0x2000_0000 size 256 KiB owner gpu0 dtype bf16

flow prefill_to_decode {
  edge attn: write kv_blk by gpu0.launch
  edge send: read kv_blk by dpu0.tx after attn  # expect: FX-OWN-001
  # ^ `send` reads `kv_blk` from `dpu0`, which neither owns nor leases it then
}
