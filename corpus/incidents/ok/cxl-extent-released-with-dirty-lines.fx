# Fixed twin of fail/cxl-extent-released-with-dirty-lines.fx: host A writes back the lines it
# stored before it releases the extent, so none of them can land over host B's data.
policy "cxl-extent-released-with-dirty-lines-fixed"

fabric {
  device cpu0: cpu hooks [app, free]
  device cpu1: cpu hooks [app]
  device dcd0: cxl_mem hooks [fm]
  link cpu0 -- dcd0 : cxl ordered
  link cpu1 -- dcd0 : cxl ordered
}
space dc0 on dcd0 base 0x100_0000_0000 size 1 GiB noncoherent
region ext in dc0 at 0x100_0000_0000 size 256 MiB owner dcd0 pooled

flow lifecycle {
  edge add_a: alloc ext to cpu0 by dcd0.fm
  edge fill_a: write ext[0, +2 MiB] by cpu0.app after add_a writeback ext[0, +2 MiB]
  edge rel_a: release ext return_pool by cpu0.free after fill_a
  edge add_b: alloc ext to cpu1 by dcd0.fm after rel_a
  edge fill_b: write ext[0, +2 MiB] by cpu1.app after add_b writeback ext[0, +2 MiB]
  edge use_b: read ext[0, +2 MiB] by cpu1.app after fill_b invalidate ext[0, +2 MiB]
}
