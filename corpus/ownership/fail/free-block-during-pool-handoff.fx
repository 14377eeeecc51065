# The allocator frees KV block 0 back to the pool while, unordered, the copy engine hands the
# whole pool to the CXL expander. The pool's handoff moves block 0 too, so it is a use of the
# block: freeing the block while that handoff may still run is a use-after-release. And once the
# handoff has finished, `gpu0` no longer owns the block it returns (FX-OWN-001): only the owner
# releases.
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
  edge fr: release blk0 return_pool by gpu0.free after fill  # expect: FX-OWN-004, FX-OWN-001
  # ^ `fr` releases `blk0` from `gpu0`, which does not own it then
  # ^ `fr` releases `blk0` (return_pool) while `offload` may still use it
}
