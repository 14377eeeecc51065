# Fixed twin of fail/posted-write-on-another-path.fx: the write is pinned to the direct `ordered`
# CXL link with `via direct0` (the driver programs that route), so no posted link can carry it and
# the near-memory reader sees it once `put` has finished. Flushing `up0` after the write would fix
# it too.
policy "posted-write-pinned-route"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device sw0: pcie_switch hooks [route]
  device cxl0: cxl_mem hooks [near_mem]
  link direct0 = gpu0 -- cxl0 : cxl ordered
  link up0 = gpu0 -- sw0 : pcie posted
  link down0 = sw0 -- cxl0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 dtype bf16 init
region blk in hdm0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16

flow offload {
  edge put: move kv -> blk by gpu0.copy_done via direct0 handoff blk: gpu0 -> cxl0
  edge scan: read blk by cxl0.near_mem after put
}
