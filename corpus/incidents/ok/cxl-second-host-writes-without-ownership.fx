# Fixed twin of fail/cxl-second-host-writes-without-ownership.fx: host A hands the segment to host B
# once its writes are done, and host B writes after the handoff.
policy "cxl-second-host-writes-without-ownership"

fabric {
  device host_a: cpu hooks [launch]
  device host_b: cpu hooks [launch]
  device cxl0: cxl_mem hooks [near_mem]
  link host_a -- cxl0 : cxl ordered
  link host_b -- cxl0 : cxl ordered
}
space shm0 on cxl0 base 0x80_0000_0000 size 1 GiB
region seg in shm0 at 0x80_0000_0000 size 2 MiB owner host_a

flow share {
  edge a_fill: write seg[0, +1 MiB] by host_a.launch
  edge a_give: write seg[0, +64 B] by host_a.launch after a_fill handoff seg: host_a -> host_b
  edge b_fill: write seg[1 MiB, +1 MiB] by host_b.launch after a_give
}
