# The fix of ordering/fail/persist-over-posted-no-flush.fx: a flush of the posted link after the
# persisting copy (here a separate edge, as a zero-length read or a CXL flush would be issued)
# makes the checkpoint durable; `seal` is `after drain`, so the commit record that depends on it is
# written only then (FX-ORD-003 asks for some flush after each persist, not for this order: the
# policy states it).
policy "persist-over-posted-flushed"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem
  link up0 = gpu0 -- cxl0 : pcie posted
}
space hbm0 on gpu0 size 80 GiB
space pmem0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent
region kv in hbm0 at 0x1000_0000 size 2 MiB owner gpu0 dtype bf16 init
region ckpt in pmem0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16
region mark in hbm0 at 0x2000_0000 size 64 KiB owner gpu0 dtype uint8 init
region commit in pmem0 at 0x80_2020_0000 size 64 KiB owner gpu0 dtype uint8

flow save {
  edge spill: move kv -> ckpt by gpu0.copy_done transform persist
  edge drain: flush up0 by gpu0.launch after spill
  edge seal: move mark -> commit by gpu0.copy_done after drain flush up0 transform persist
}
