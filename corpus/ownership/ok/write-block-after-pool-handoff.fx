# Fixed twin of fail/write-block-after-pool-handoff.fx: the late write to block 0 runs before the
# pool is handed off, while the GPU still owns the pool and every block in it.
policy "write-block-after-pool-handoff"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
region kv in hbm0 at 0x4000_0000 size 2 MiB owner gpu0 dtype bf16
region blk0 in hbm0 at 0x4000_0000 size 256 KiB owner gpu0 dtype bf16
alias_set kv_pool = [kv, blk0]

flow offload_pool {
  edge fill: write kv by gpu0.launch
  edge late: write blk0 by gpu0.launch after fill
  edge offload: read kv by gpu0.copy_done after late handoff kv: gpu0 -> cxl0
  final owner blk0 = cxl0
}
