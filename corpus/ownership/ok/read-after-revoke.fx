# Fixed twin of fail/read-after-revoke.fx: the GPU takes the KV block back from the DPU
# (`revoke kv_blk from dpu0`) and rewrites it, then grants a new lease on the edge that finishes
# the rewrite. The retransmit runs after that edge, so it reads under the new lease; the old one
# ended at the revoke.
policy "read-after-revoke"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region kv_blk in hbm0 at 0x2000_0000 size 256 KiB owner gpu0 dtype bf16

flow prefill_to_decode {
  edge attn: write kv_blk by gpu0.launch lease kv_blk to dpu0
  edge send: read kv_blk by dpu0.tx after attn
  edge reuse: write kv_blk by gpu0.launch after send revoke kv_blk from dpu0
  edge regrant: read kv_blk by gpu0.copy_done after reuse lease kv_blk to dpu0
  edge resend: read kv_blk by dpu0.tx after regrant
}
