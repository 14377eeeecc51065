# Fixed twin of fail/eventual-guard.fx: `layer_done` is `causal`, and the DPU's guard runs after the
# edge that writes the flag, so the write happens-before the guard and the guard is sure to see it.
policy "causal-guard"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region kv in hbm0 at 0x2000_0000 size 4 MiB owner gpu0 dtype bf16
map layer_done: array<u32, u32>[32] class causal merge max

flow send {
  edge attn: write kv by gpu0.launch lease kv to dpu0 update layer_done[3] = 1
  edge xmit: read kv by dpu0.tx after attn guard layer_done[3] == 1
}
