# Incident (disaggregated prefill): in a layer-wise KV transfer, the push of layer l can ship KV
# that layer l's attention kernel is still writing. The push waits on an event recorded before
# layer l's kernel was enqueued, in effect the end of layer l-1, so overlapping the send of layer
# l with compute does not order it after that layer's own kernel.
# Fix: record the event after layer l's kernel, and make the push of layer l wait for it.
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
    if l > 0 {
      edge push[l]: move kv[l] -> staged[l] by gpu0.copy_done stream copy after attn[l - 1]  # expect: FX-ORD-002, FX-INIT-001
      # ^ data race (write-read) on `kv[1]`: `attn[1]` and `push[1]` may overlap in time
      # ^ `push[1]` reads byte 0x40200000 of `kv[1]`, bf16 element 0, which no edge writes before it
    } else {
      edge push[l]: move kv[l] -> staged[l] by gpu0.copy_done stream copy  # expect: FX-ORD-002, FX-INIT-001
      # ^ data race (write-read) on `kv[0]`: `attn[0]` and `push[0]` may overlap in time
      # ^ `push[0]` reads byte 0x40000000 of `kv[0]`, bf16 element 0, which no edge writes before it
    }
  }
}
