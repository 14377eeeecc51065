# A read-back meant to make a checkpoint durable (the read-after-write flush of persistent
# memory), over the write's one port; but a watchdog may cancel it, as a transport cancels a
# work request it flushes on error. A cancelled read may never be issued, and a read that is
# not issued pushes no posted write to the expander: a power loss then loses the checkpoint.
# Fix: ordering/ok/persist-over-posted-flushed.fx (a flush of the link, which nothing cancels)
# or ordering/ok/persist-read-back-same-route.fx (a read-back nothing cancels).
policy "persist-read-back-cancelled"

fabric {
  device gpu0: gpu hooks [launch, copy_done, abort]
  device cxl0: cxl_mem
  link up0 = gpu0 -- cxl0 : pcie posted
}
space hbm0 on gpu0 size 80 GiB
space pmem0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent
region kv in hbm0 at 0x1000_0000 size 2 MiB owner gpu0 dtype bf16 init
region echo in hbm0 at 0x2000_0000 size 4 KiB owner gpu0 dtype bf16
region ckpt in pmem0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16

flow save {
  edge spill: move kv -> ckpt by gpu0.copy_done via up0 transform persist  # expect: FX-ORD-003
  # ^ `spill` persists bytes over posted link `up0`, and no flush of `up0` follows it
  edge verify: move ckpt[0, +4 KiB] -> echo by gpu0.copy_done via up0 after spill
  edge watchdog: cancel verify by gpu0.abort after spill
}
