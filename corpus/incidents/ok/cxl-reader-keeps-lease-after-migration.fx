# Fixed twin of fail/cxl-reader-keeps-lease-after-migration.fx: host B's second read comes after host C
# has rewritten the segment and granted host B a new lease.
policy "cxl-reader-keeps-lease-after-migration"

fabric {
  device host_a: cpu hooks [launch]
  device host_b: cpu hooks [launch]
  device host_c: cpu hooks [launch]
  device cxl0: cxl_mem hooks [near_mem]
  link host_a -- cxl0 : cxl ordered
  link host_b -- cxl0 : cxl ordered
  link host_c -- cxl0 : cxl ordered
}
space shm0 on cxl0 base 0x80_0000_0000 size 1 GiB
space dram_b on host_b size 64 GiB
region seg in shm0 at 0x80_0000_0000 size 2 MiB owner host_a
region local_b in dram_b at 0x0 size 2 MiB owner host_b

flow tiering {
  edge a_fill: write seg by host_a.launch lease seg to host_b
  edge b_read0: move seg -> local_b by host_b.launch after a_fill
  edge migrate: write seg[0, +64 B] by host_a.launch after b_read0 handoff seg: host_a -> host_c
  edge c_write: write seg by host_c.launch after migrate lease seg to host_b
  edge b_read1: move seg -> local_b by host_b.launch after c_write
}
