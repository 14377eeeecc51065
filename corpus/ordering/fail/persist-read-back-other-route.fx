# A read-back meant to make a checkpoint durable, as RDMA and PCIe persistent-memory code does
# instead of a flush; but `verify` pins no route, and the expander has two ports. PCIe orders a
# read behind the same requester's posted writes only along one path: a read over `up1` may
# complete while the writes sent over `up0` are still on their way, and a power loss then loses
# the checkpoint. Fix: ordering/ok/persist-read-back-same-route.fx (`verify` pinned `via up0`).
policy "persist-read-back-other-route"

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
  edge spill: move kv -> ckpt by gpu0.copy_done via up0 transform persist  # expect: FX-ORD-003
  # ^ `spill` persists bytes over posted link `up0`, and no flush of `up0` follows it
  edge verify: move ckpt[0, +4 KiB] -> echo by gpu0.copy_done after spill  # expect: FX-ORD-003
  # ^ `verify` reads bytes that `spill` wrote over posted link `up0` with no flush in between
}
