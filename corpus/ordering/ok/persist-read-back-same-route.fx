# A checkpoint made durable by reading it back, as RDMA and PCIe persistent-memory code does
# instead of a flush (the read-after-write flush): `verify` is issued by the GPU after `spill`
# finished, over the same single port `up0` (both pinned `via up0`), so its read request cannot
# pass the posted writes ahead of it (PCIe transaction ordering), and its completion returns only
# once they reached the expander's persistence domain. The fix of
# ordering/fail/persist-read-back-other-route.fx.
policy "persist-read-back-same-route"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem
  link up0 = gpu0 -- cxl0 : pcie posted
  link up1 = gpu0 -- cxl0 : pcie posted  # a second port to the same expander
}
space hbm0 on gpu0 size 80 GiB
space pmem0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent
region kv in hbm0 at 0x1000_0000 size 2 MiB owner gpu0 dtype bf16 init
region echo in hbm0 at 0x2000_0000 size 4 KiB owner gpu0 dtype bf16
region ckpt in pmem0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16

flow save {
  edge spill: move kv -> ckpt by gpu0.copy_done via up0 transform persist
  edge verify: move ckpt[0, +4 KiB] -> echo by gpu0.copy_done via up0 after spill
}
