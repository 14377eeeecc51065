# Host A flushes a buffer line by line (CLFLUSHOPT in a loop) but rings host B's doorbell without
# the SFENCE that would wait for the flushes: the doorbell store passes the flush loop, so B may
# invalidate and read the buffer before the write-back has reached memory. In the policy, the
# write-back edge `flush` is not ordered before the doorbell `ring`, so nothing orders it before
# B's invalidate.
policy "cxl-unfenced-flush-loop"

fabric {
  device cpu0: cpu hooks [run]
  device cpu1: cpu hooks [run]
  device mem0: cxl_mem hooks [near_mem]
  link cpu0 -- mem0 : cxl ordered
  link cpu1 -- mem0 : cxl ordered
}
space shm0 on mem0 base 0x80_0000_0000 size 256 MiB noncoherent
region buf in shm0 at 0x80_0000_0000 size 64 KiB owner cpu0
region bell in shm0 at 0x80_0001_0000 size 64 owner cpu0

flow handoff {
  edge fill: write buf by cpu0.run lease buf to cpu1
  edge flush: writeback buf by cpu0.run after fill
  edge ring: write bell by cpu0.run after fill writeback bell lease bell to cpu1
  edge wake: read bell by cpu1.run after ring invalidate bell
  edge take: read buf by cpu1.run after wake invalidate buf  # expect: FX-ORD-005
  # ^ `take` on `cpu1` reads bytes of non-coherent `shm0` that `fill` wrote on `cpu0`, but not after `cpu1`'s invalidate starts after `cpu0`'s write-back finishes
}
