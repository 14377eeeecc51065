# The GPU writes a KV block into the CXL expander and the near-memory engine reads it after the
# write. The direct CXL link is `ordered`, but the GPU also reaches the expander through a PCIe
# switch whose upstream link is `posted`, and nothing in the policy says which path the write
# takes. Writes may take either path (address-based routing, failover), so the reader needs the
# guarantees of both: on the switch path the write can still be in flight when the reader starts.
# Swapping the two paths' `link` lines must never change the verdict.
policy "posted-write-on-another-path"

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
  edge put: move kv -> blk by gpu0.copy_done handoff blk: gpu0 -> cxl0
  edge scan: read blk by cxl0.near_mem after put  # expect: FX-ORD-003
  # ^ `scan` reads bytes that `put` wrote over posted link `up0` with no flush in between
}
