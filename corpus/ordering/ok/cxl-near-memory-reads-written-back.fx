# The same offload as the failing twin, with the chunk written back (CLWB + SFENCE) by the storing
# edge: the near-memory engine, which reads the memory itself, then sees every byte.
policy "cxl-near-memory-reads-written-back"

fabric {
  device cpuA: cpu hooks [run]
  device mhd0: cxl_mem hooks [near_mem]
  link cpuA -- mhd0 : cxl ordered
}
space shm0 on mhd0 base 0x40_0000_0000 size 1 GiB noncoherent
region chunk in shm0 at 0x40_0000_0000 size 64 KiB owner cpuA
region packed in shm0 at 0x40_0010_0000 size 64 KiB owner mhd0

flow offload {
  edge put: write chunk by cpuA.run writeback chunk lease chunk to mhd0
  edge pack: move chunk -> packed by mhd0.near_mem after put
}
