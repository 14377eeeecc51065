# The DPU sends a finished KV block to a remote decode node under a read lease; when the send is
# done the GPU takes the block back to rewrite it for the next request (`revoke kv_blk from
# dpu0`). The DPU then retransmits the block from GPU memory: its lease ended when the revoking
# edge started, so it reads memory it neither owns nor leases, while the GPU rewrites it. Grant a
# new lease after the revoke (or retransmit before it).
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
  edge resend: read kv_blk by dpu0.tx after reuse  # expect: FX-OWN-001
  # ^ `resend` reads `kv_blk` from `dpu0`, which neither owns nor leases it then
}
