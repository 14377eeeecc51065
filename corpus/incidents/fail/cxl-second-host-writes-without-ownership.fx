# Incident (CXL sharing): a second host writes a shared CXL segment that the first host still
# owns and writes. The segment lives on a multi-headed CXL memory device; CXL 2.0 sharing gives no
# coherence between hosts, so software must pass ownership of the segment (a lock or a token in
# it) before another host writes, and host B's writer skips that protocol.
# Fix: host A hands the segment to host B once its writes are done; host B writes after that.
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
  edge b_fill: write seg[1 MiB, +1 MiB] by host_b.launch  # expect: FX-OWN-001
  # ^ `b_fill` writes `seg` from `host_b`, which neither owns nor leases it then
}
