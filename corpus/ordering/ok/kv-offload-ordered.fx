# Fixed twin of fail/kv-offload-unordered.fx. The offload still runs on its own copy stream, so it
# can overlap later kernels, but `after attn` makes it wait until the kernel that writes the KV
# block has finished (in CUDA terms: record an event on the compute stream, wait on it in the
# copy stream). Every schedule now reads a complete block.
policy "kv-offload-ordered"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 16 GiB
region kv_blk in hbm0 at 0x2000_0000 size 2 MiB owner gpu0 dtype bf16 init  # holds the KV of earlier decode steps
region kv_host in host0 at 0x1_4000_0000 size 2 MiB owner gpu0 dtype bf16

flow decode_step {
  edge attn: write kv_blk by gpu0.launch stream compute
  edge offload: move kv_blk -> kv_host by gpu0.copy_done stream copy after attn
}
