# The fix of fail/cxl-unfenced-flush-loop.fx: the fence after the flush loop makes the doorbell
# wait for the write-back (`ring` is after `flush`), so B's invalidate starts after the buffer is
# in memory.
policy "cxl-fenced-flush-loop"

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
  edge ring: write bell by cpu0.run after flush writeback bell lease bell to cpu1
  edge wake: read bell by cpu1.run after ring invalidate bell
  edge take: read buf by cpu1.run after wake invalidate buf
}
