# Two hosts share one CXL memory device without cross-host coherence (a multi-headed Type-3
# device, `noncoherent`). Host A initialises the device header (its identity) with plain stores;
# host B then checks the header before it initialises the device itself. Ordering B after A is not
# enough: A's stores may still sit in A's cache, and B's cache may still hold the old line, so B
# sees an uninitialised header and writes a second, different identity. A read on another host
# needs three steps in order: the writer's write-back (flush and fence), the reader's invalidate,
# then the read.
policy "cxl-header-plain-stores"

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
  edge init_a: write hdr[0, +64] by cpu0.init lease hdr to cpu1
  edge probe_b: read hdr[0, +64] by cpu1.init after init_a  # expect: FX-ORD-005
  # ^ `probe_b` on `cpu1` reads bytes of non-coherent `shm0` that `init_a` wrote on `cpu0`, but not after `cpu0` writes them back
}
