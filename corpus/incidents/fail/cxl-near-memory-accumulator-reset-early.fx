# Incident (CXL sharing): a near-memory accumulator in CXL memory is zeroed for the next step
# before anyone has read the step's sum. Hosts push partial sums that the device's near-memory
# engine adds; the reset is ordered after the reductions, but nothing reads the result out in
# between.
# Fix: read the accumulated result out after the reductions, and reset only after that read.
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
  edge reset: write acc by cxl0.near_mem after red_a, red_b  # expect: FX-XF-004
  # ^ `reset` overwrites bytes that `red_a` accumulated before anyone read them
  # ^ `reset` overwrites bytes that `red_b` accumulated before anyone read them
}
