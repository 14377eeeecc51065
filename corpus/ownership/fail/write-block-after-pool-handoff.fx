# A KV-cache pool `kv` holds blocks; `blk0` is its first block. The GPU hands the whole pool to
# the CXL expander for offload, then a late kernel still writes block 0. A handoff of the pool
# moves every block inside it, so after `offload` the GPU owns neither `kv` nor `blk0`.
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
  edge offload: read kv by gpu0.copy_done after fill handoff kv: gpu0 -> cxl0
  edge late: write blk0 by gpu0.launch after offload  # expect: FX-OWN-001
  # ^ `late` writes `blk0` from `gpu0`, which neither owns nor leases it then
}
