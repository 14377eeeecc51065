# The DPU decides whether a layer's KV may be sent by guarding on a `layer_done` flag, but the map
# is `eventual`: replicas merge some time later and a read never promises to see a given write.
# The guard can read the old value even when the GPU set the flag long before, so the DPU may send
# a layer that is not finished. A guard needs a class that sees the write it depends on.
policy "eventual-guard"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region kv in hbm0 at 0x2000_0000 size 4 MiB owner gpu0 dtype bf16
map layer_done: array<u32, u32>[32] class eventual merge max

flow send {
  edge attn: write kv by gpu0.launch lease kv to dpu0 update layer_done[3] = 1
  edge xmit: read kv by dpu0.tx after attn guard layer_done[3] == 1  # expect: FX-MAP-003
  # ^ guard `layer_done[3]` in `xmit` may miss the write by `attn` (eventual map)
}
