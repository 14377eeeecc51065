# The fix of fail/cxl-header-plain-stores.fx: host A writes its header back (CLWB or CLFLUSHOPT
# then SFENCE: the write-back completes when `init_a` finishes), and host B invalidates the lines
# as `probe_b` starts, after A's write-back, so B reads the identity A wrote and does not
# initialise the device a second time.
policy "cxl-header-writeback-invalidate"

fabric {
  device cpu0: cpu hooks [init]
  device cpu1: cpu hooks [init]
  device mhd0: cxl_mem hooks [near_mem]
  link cpu0 -- mhd0 : cxl ordered
  link cpu1 -- mhd0 : cxl ordered
}
space shm0 on mhd0 base 0x40_0000_0000 size 1 GiB noncoherent
region hdr in shm0 at 0x40_0000_0000 size 4 KiB owner cpu0

flow bring_up {
  edge init_a: write hdr[0, +64] by cpu0.init writeback hdr[0, +64] lease hdr to cpu1
  edge probe_b: read hdr[0, +64] by cpu1.init after init_a invalidate hdr[0, +64]
}
