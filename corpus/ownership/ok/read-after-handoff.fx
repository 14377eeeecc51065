# Fixed twin of fail/read-during-handoff.fx (and of fail/lease-on-handoff-edge.fx): the GPU hands
# a KV block to the DPU for sending; the DPU, the new owner, grants the GPU a read lease back once
# it holds the block, and the scoring kernel runs after that grant, so it reads the block under
# the DPU's lease, never while the block is in transit.
policy "read-after-handoff"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region kv_blk in hbm0 at 0x2000_0000 size 256 KiB owner gpu0 dtype bf16

flow prefill_to_decode {
  edge attn: write kv_blk by gpu0.launch
  edge give: read kv_blk by gpu0.copy_done after attn handoff kv_blk: gpu0 -> dpu0
  edge lend: read kv_blk[0, +64] by dpu0.rx after give lease kv_blk to gpu0
  edge score: read kv_blk by gpu0.launch after lend
  edge send: read kv_blk by dpu0.tx after give
}
