# Incident (KV-cache offload): the GPU KV cache is stored in fp8, but the offload connector sizes
# and types its host buffers from the model's dtype (bf16). Copying the blocks byte for byte
# puts fp8 bytes where the loader expects bf16 elements: the reloaded KV is garbage.
# Fix: give the host buffer the cache's dtype (fp8), so producer and consumer agree.
policy "fp8-kv-offloaded-into-bf16-buffer"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region kv in hbm0 at 0x4000_0000 size 4 MiB owner gpu0 dtype fp8
region host_kv in host0 at 0x1_4000_0000 size 4 MiB owner gpu0 dtype bf16

flow offload {
  edge attn: write kv by gpu0.launch
  edge save: move kv -> host_kv by gpu0.copy_done after attn  # expect: FX-XF-003
  # ^ `save`: writes `fp8` into `host_kv`, which holds `bf16`
}
