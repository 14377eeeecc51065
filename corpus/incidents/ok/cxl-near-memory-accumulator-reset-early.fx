# Fixed twin of fail/cxl-near-memory-accumulator-reset-early.fx: the accumulated sum is read out after
# the reductions, and the reset runs after that read.
policy "cxl-near-memory-accumulator-reset-early"

fabric {
  device host_a: cpu hooks [launch]
  device host_b: cpu hooks [launch]
  device cxl0: cxl_mem hooks [near_mem]
  link host_a -- cxl0 : cxl ordered
  link host_b -- cxl0 : cxl ordered
}
space shm0 on cxl0 base 0x80_0000_0000 size 1 GiB
region part_a in shm0 at 0x80_0000_0000 size 1 MiB owner cxl0 dtype fp32 init
region part_b in shm0 at 0x80_0010_0000 size 1 MiB owner cxl0 dtype fp32 init
region acc in shm0 at 0x80_0100_0000 size 1 MiB owner cxl0 dtype fp32 init
region result in shm0 at 0x80_0200_0000 size 1 MiB owner cxl0 dtype fp32

flow allreduce {
  edge red_a: reduce(sum) part_a -> acc by cxl0.near_mem
  edge red_b: reduce(sum) part_b -> acc by cxl0.near_mem
  edge read_out: move acc -> result by cxl0.near_mem after red_a, red_b
  edge reset: write acc by cxl0.near_mem after read_out
}
