# Fixed twin of fail/free-block-during-pool-handoff.fx: the pool is handed off first, and the
# block goes back to the pool only after the handoff is complete, from the pool's new owner.
policy "free-block-during-pool-handoff"

fabric {
  device gpu0: gpu hooks [launch, copy_done, free]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
region kvpool in hbm0 at 0x4000_0000 size 4 MiB owner gpu0 dtype bf16
region blk0 in hbm0 at 0x4000_0000 size 1 MiB owner gpu0 dtype bf16
alias_set kvs = [kvpool, blk0]

flow f {
  edge fill: write kvpool by gpu0.launch
  edge offload: read kvpool by gpu0.copy_done after fill handoff kvpool: gpu0 -> cxl0
  edge fr: release blk0 return_pool by cxl0.near_mem after offload
}
