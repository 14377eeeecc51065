# The GPU hands a KV block to the DPU and, on the same edge, grants itself a read lease to keep
# scoring it. A lease ends at a handoff of its region, its own edge's included: the GPU no longer
# owns the block when the lease would start, the DPU never agreed to it, and the DPU may rewrite
# the block while the GPU reads. The scoring read has neither ownership nor a lease.
# Fixed twin: ok/read-after-handoff.fx (the DPU grants the lease back after the handoff).
policy "lease-on-handoff-edge"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region kv_blk in hbm0 at 0x2000_0000 size 256 KiB owner gpu0 dtype bf16

flow prefill_to_decode {
  edge attn: write kv_blk by gpu0.launch
  edge give: read kv_blk by gpu0.copy_done after attn handoff kv_blk: gpu0 -> dpu0 lease kv_blk to gpu0
  edge score: read kv_blk by gpu0.launch after give  # expect: FX-OWN-001
  # ^ `score` reads `kv_blk` from `gpu0`, which neither owns nor leases it then
  edge send: read kv_blk by dpu0.tx after give
}
