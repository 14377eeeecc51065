# Fixed twin of fail/kv-store-directory-read-eventually.fx: the directory is a causal map, and the
# lookup is ordered after the update, so the guard sees the new location.
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
map where: hash<u32, device>[4096] class causal

flow fetch {
  edge put: write store by gpu_p.copy_done lease store to gpu_d map_write where[9] = cxl0
  edge get: move store -> kv_d by gpu_d.copy_done after put guard where[9] == cxl0
}
