# The fix of ordering/fail/posted-copy-inside-remote-memory.fx: the GPU flushes `pg` after its
# copy engine compacted the block inside the CXL expander, and the DPU sends the block only after
# that flush, so the copy's posted writes have reached the expander.
policy "posted-copy-inside-remote-memory-flushed"

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
  edge drain: flush pg by gpu0.launch after compact
  edge send: read b by dpu0.tx after drain
}
