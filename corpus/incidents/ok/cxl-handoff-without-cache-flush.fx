# Fixed twin of fail/cxl-handoff-without-cache-flush.fx: host A's handoff edge flushes its link to the
# device (the cache-line flush and fence), so every write before it is visible to host B.
policy "cxl-handoff-without-cache-flush"

fabric {
  device host_a: cpu hooks [launch]
  device host_b: cpu hooks [launch]
  device cxl0: cxl_mem hooks [near_mem]
  link a0 = host_a -- cxl0 : cxl posted
  link b0 = host_b -- cxl0 : cxl ordered
}
space shm0 on cxl0 base 0x80_0000_0000 size 1 GiB
space dram_b on host_b size 64 GiB
region seg in shm0 at 0x80_0000_0000 size 2 MiB owner host_a
region local_b in dram_b at 0x0 size 2 MiB owner host_b

flow share {
  edge a_fill: write seg by host_a.launch
  edge a_give: write seg[0, +64 B] by host_a.launch after a_fill handoff seg: host_a -> host_b flush a0
  edge b_read: move seg -> local_b by host_b.launch after a_give
}
