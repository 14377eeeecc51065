# Incident (CXL sharing): a dynamic-capacity extent of a CXL memory device is shared by hosts
# without coherence between them. Host A stores into the extent through its cache and releases it
# without flushing its dirty lines; the fabric manager hands the extent to host B, which fills
# and reads it. Host A's dirty lines can be evicted at any later time and land over B's data: a
# host must flush the lines of dynamic capacity before it releases them.
# Fix: host A writes its lines back (clflush/clwb and a fence) before it releases the extent.
policy "cxl-extent-released-with-dirty-lines"

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
  edge fill_a: write ext[0, +2 MiB] by cpu0.app after add_a
  edge rel_a: release ext return_pool by cpu0.free after fill_a
  edge add_b: alloc ext to cpu1 by dcd0.fm after rel_a
  edge fill_b: write ext[0, +2 MiB] by cpu1.app after add_b writeback ext[0, +2 MiB]
  edge use_b: read ext[0, +2 MiB] by cpu1.app after fill_b invalidate ext[0, +2 MiB]  # expect: FX-ORD-005
  # ^ `use_b` on `cpu1` reads bytes of non-coherent `dc0` that `fill_a` wrote on `cpu0`, but not after `cpu0` writes them back: `fill_b` wrote them since, but a line `cpu0` left dirty may still be written back over its data
}
