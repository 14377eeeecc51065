# The aborted transfer of fail/free-before-cancel-completes.fx, freed once the cancel has
# completed: `stop` cancels the RDMA read, and `free0` returns the landing block to the pool only
# after `stop` finishes. From then on the cancelled read touches no byte of the block, so the
# release, the next request's `alloc` and its write are safe, although `pull` itself is not
# ordered before any of them (it may still be "running" until its error completion arrives).
# Nothing reads what `pull` wrote: a cancelled write may stop halfway and defines no byte.
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
  edge pull: move pkv -> land by dpu_d.rx after attn, take0
  edge stop: cancel pull by dpu_d.tx after take0
  edge free0: release land return_pool by dpu_d.free after stop
  edge take1: alloc land to dpu_d by dpu_d.alloc after free0
  edge fill1: write land by dpu_d.rx after take1
}
