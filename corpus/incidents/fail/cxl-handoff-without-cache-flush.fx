# Incident (CXL sharing): host A writes a shared CXL segment and then passes it to host B by
# setting a flag. Without coherence between hosts, host A's stores can sit in its caches (or
# write buffers) after the flag is set, so host B reads stale lines. Software-coherent sharing
# needs the writer to flush the lines it wrote (clflush/clwb and a fence) before it signals.
# Fix: host A flushes its link to the device after the writes and before handing off.
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
  edge a_give: write seg[0, +64 B] by host_a.launch after a_fill handoff seg: host_a -> host_b
  edge b_read: move seg -> local_b by host_b.launch after a_give  # expect: FX-ORD-003
  # ^ `b_read` reads bytes that `a_fill` wrote over posted link `a0` with no flush in between
  # ^ `b_read` reads bytes that `a_give` wrote over posted link `a0` with no flush in between
}
