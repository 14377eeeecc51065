# A GPU's copy engine compacts a KV block inside a CXL expander (source and destination both in
# its memory window), then lends the block to the DPU, which sends it. The copy engine reads the
# block in and writes it back out, so its writes reach the expander over the posted link `pg`:
# the DPU, reading over its own link, may see the old bytes. Nothing flushes `pg`.
# Fix: ordering/ok/posted-copy-inside-remote-memory-flushed.fx (a flush of `pg` between them).
policy "posted-copy-inside-remote-memory"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [tx]
  device cxl0: cxl_mem hooks [near_mem]
  link pg = gpu0 -- cxl0 : cxl posted
  link dpu0 -- cxl0 : cxl ordered
}
space hdm0 on cxl0 base 0x80_0000_0000 size 1 GiB
region a in hdm0 at 0x80_0000_0000 size 1 MiB owner gpu0 init
region b in hdm0 at 0x80_0010_0000 size 1 MiB owner gpu0

flow compact {
  edge compact: move a -> b by gpu0.copy_done lease b to dpu0
  edge send: read b by dpu0.tx after compact  # expect: FX-ORD-003
  # ^ `send` reads bytes that `compact` wrote over posted link `pg` with no flush in between
}
