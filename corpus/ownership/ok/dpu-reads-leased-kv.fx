# Fixed twin of fail/dpu-reads-unleased-kv.fx: the attention kernel that finishes the KV block
# grants the DPU a read lease (`lease kv_blk to dpu0`). The lease starts when that edge ends, and
# the DPU's send runs after it, so the DPU reads under a lease while the GPU keeps ownership.
policy "dpu-reads-leased-kv"

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
}
