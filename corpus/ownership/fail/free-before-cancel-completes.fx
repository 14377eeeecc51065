# A transfer engine on the decode node's DPU pulls a prefilled KV block from the prefill GPU into
# a landing block of its own pool with an RDMA read. The request is aborted while the read is in
# flight: `stop` cancels the read and, in the same step, returns the landing block to the pool.
# A cancel takes effect when it completes (the work request is flushed with an error completion),
# not when it is issued: until `stop` finishes, the read may still be writing the block, so the
# block is freed under a DMA that is still running, and the next request's `alloc` of it may hand
# out bytes the old read is still landing in. A release must come after every use of the block,
# and a cancelled transfer's use ends only when its cancel completes.
policy "free-before-cancel-completes"

fabric {
  device gpu_p: gpu hooks [launch]
  device dpu_d: dpu hooks [rx, tx, alloc, free]
  link gpu_p -- dpu_d : rdma ordered
}
space hbm_p on gpu_p size 80 GiB
space ddr_d on dpu_d size 16 GiB
region pkv in hbm_p at 0x4000_0000 size 1 MiB owner gpu_p dtype bf16
region land in ddr_d at 0x1000_0000 size 1 MiB owner dpu_d dtype bf16 pooled

flow abort {
  edge attn: write pkv by gpu_p.launch lease pkv to dpu_d
  edge take0: alloc land to dpu_d by dpu_d.alloc
  edge pull: move pkv -> land by dpu_d.rx after attn, take0  # expect: FX-OWN-004
  # ^ `pull` may use `land` while `stop` releases it (a cancelled transfer touches its bytes until its cancel completes)
  edge stop: cancel pull by dpu_d.tx after take0 release land return_pool
  edge take1: alloc land to dpu_d by dpu_d.alloc after stop
  edge fill1: write land by dpu_d.rx after take1
}
