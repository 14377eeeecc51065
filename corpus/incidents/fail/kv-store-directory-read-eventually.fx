# Incident (disaggregated prefill): the decode side decides where to fetch a KV block from by
# reading an eventually consistent replica of the KV store's directory. The prefill side records
# the block's new location after moving it, but even a lookup that runs after the update may not
# see it on an eventual replica, so decode fetches from the old location, which may already be
# reused.
# Fix: keep the directory entries that decide a fetch in a causal (or linearizable) map, and
# order the lookup after the update.
policy "kv-store-directory-read-eventually"

fabric {
  device gpu_p: gpu hooks [launch, copy_done]
  device gpu_d: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu_p -- cxl0 : cxl ordered
  link gpu_d -- cxl0 : cxl ordered
}
space hdm0 on cxl0 base 0x80_0000_0000 size 1 GiB
space hbm_d on gpu_d size 80 GiB
region store in hdm0 at 0x80_0000_0000 size 4 MiB owner gpu_p dtype bf16
region kv_d in hbm_d at 0x4000_0000 size 4 MiB owner gpu_d dtype bf16
map where: hash<u32, device>[4096] class eventual merge last

flow fetch {
  edge put: write store by gpu_p.copy_done lease store to gpu_d map_write where[9] = cxl0
  edge get: move store -> kv_d by gpu_d.copy_done after put guard where[9] == cxl0  # expect: FX-MAP-003
  # ^ guard `where[9]` in `get` may miss the write by `put` (eventual map)
}
