# Fixed twin of fail/fp8-kv-offloaded-into-bf16-buffer.fx: the host buffer has the KV cache's dtype
# (fp8), so the bytes the offload writes are what the loader reads.
policy "fp8-kv-offloaded-into-bf16-buffer"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region kv in hbm0 at 0x4000_0000 size 4 MiB owner gpu0 dtype fp8
region host_kv in host0 at 0x1_4000_0000 size 4 MiB owner gpu0 dtype fp8

flow offload {
  edge attn: write kv by gpu0.launch
  edge save: move kv -> host_kv by gpu0.copy_done after attn
}
