# Fixed twin of fail/pd-layerwise-push-waits-for-previous-layer.fx: the push of layer l waits for
# layer l's own attention kernel (`after attn[l]`).
policy "pd-layerwise-push-waits-for-previous-layer"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region kv[l in 0..4] in hbm0 at 0x4000_0000 + l * 2 MiB size 2 MiB owner gpu0 dtype bf16
region staged[l in 0..4] in host0 at 0x1_4000_0000 + l * 2 MiB size 2 MiB owner gpu0 dtype bf16

flow prefill {
  for l in 0..4 {
    edge attn[l]: write kv[l] by gpu0.launch stream compute
    edge push[l]: move kv[l] -> staged[l] by gpu0.copy_done stream copy after attn[l]
  }
}
