# A KV offload pool in a CXL expander whose slots carry a crc32c of what they hold. Request 0's
# block is offloaded with its checksum, then evicted unread (a prefix-cache miss) and its slot
# returned to the pool; request 1 gets the slot again and offloads its own block, with its own
# checksum. The old checksum ended with its allocation: the new write lands in another
# allocation of the slot, which that checksum never described, so nothing is stale.
policy "checksum-pool-slot-reused"
fabric {
  device gpu0: gpu hooks [launch, copy_done, alloc, free]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_0000_0000 size 1 GiB
region kv0 in hbm0 at 0x0 size 64 KiB owner gpu0 dtype bf16 init
region kv1 in hbm0 at 64 KiB size 64 KiB owner gpu0 dtype bf16 init
region slot in hdm0 at 0x80_0000_0000 size 64 KiB owner gpu0 dtype bf16 pooled
flow f {
  edge a0: alloc slot to gpu0 by gpu0.alloc
  edge off0: move kv0 -> slot by gpu0.copy_done after a0 transform checksum(crc32c)
  edge ev0: release slot return_pool by gpu0.free after off0
  edge a1: alloc slot to gpu0 by gpu0.alloc after ev0
  edge off1: move kv1 -> slot by gpu0.copy_done after a1 transform checksum(crc32c)
}
