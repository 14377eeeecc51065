# A KV block is offloaded to host memory on a separate copy stream while the attention kernel
# on the compute stream may still be writing it. Streams order only their own edges, so nothing
# makes the copy wait for the kernel: it can read a half-written block (read-write race).
# Fix: make the offload `after` the kernel (see ok/kv-offload-ordered.fx).
policy "kv-offload-unordered"

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
  edge offload: move kv_blk -> kv_host by gpu0.copy_done stream copy  # expect: FX-ORD-002
  # ^ data race (write-read) on `kv_blk`: `attn` and `offload` may overlap in time
}
