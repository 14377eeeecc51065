# The GPU hands a KV block to the DPU for sending, and the DPU grants it a read lease back once it
# holds the block. A scoring kernel reads the block with no order against the handoff: the GPU
# owns the block before the handoff and is leased it afterwards, but while the handoff runs the
# block is in transit and belongs to nobody, and between the handoff and the DPU's grant the GPU
# holds neither ownership nor a lease.
policy "read-during-handoff"

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
  edge score: read kv_blk by gpu0.launch after attn  # expect: FX-OWN-002, FX-OWN-001
  # ^ `score` reads `kv_blk` from `gpu0`, which neither owns nor leases it then
  # ^ `score` accesses `kv_blk` while `give` is handing it off
  edge send: read kv_blk by dpu0.tx after give
}
