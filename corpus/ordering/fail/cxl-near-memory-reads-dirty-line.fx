# Two servers share a CXL multi-headed memory device without cross-host coherence. Host A writes
# a KV chunk into the shared segment with plain stores and asks the device's near-memory engine to
# compress it in place. The engine has no host cache: it reads the memory itself, so it sees A's
# stores only once A has written them back (flush and fence). Ordering the engine after A is not
# enough; a device that is not a host is no exemption from the cache model.
policy "cxl-near-memory-reads-dirty-line"

fabric {
  device cpuA: cpu hooks [run]
  device mhd0: cxl_mem hooks [near_mem]
  link cpuA -- mhd0 : cxl ordered
}
space shm0 on mhd0 base 0x40_0000_0000 size 1 GiB noncoherent
region chunk in shm0 at 0x40_0000_0000 size 64 KiB owner cpuA
region packed in shm0 at 0x40_0010_0000 size 64 KiB owner mhd0

flow offload {
  edge put: write chunk by cpuA.run lease chunk to mhd0
  edge pack: move chunk -> packed by mhd0.near_mem after put  # expect: FX-ORD-005
  # ^ `pack` on `mhd0` (straight from memory) reads bytes of non-coherent `shm0` that `put` wrote on `cpuA`, but not after `cpuA` writes them back
}
