# The fix of fail/cxl-log-append-no-flush.fx: host A writes the record back before it publishes
# the tail (a separate `flush_rec` edge: its write-back and fence complete before `publish`
# starts), so once B sees the new tail and invalidates the record, the record is in memory.
policy "cxl-log-append-flushed"

fabric {
  device cpu0: cpu hooks [log]
  device cpu1: cpu hooks [log]
  device mem0: cxl_mem hooks [near_mem]
  link cpu0 -- mem0 : cxl ordered
  link cpu1 -- mem0 : cxl ordered
}
space shm0 on mem0 base 0x80_0000_0000 size 256 MiB noncoherent
region log in shm0 at 0x80_0000_0000 size 1 MiB owner cpu0
region tail in shm0 at 0x80_0010_0000 size 64 owner cpu0

flow append {
  edge record: write log[0, +256] by cpu0.log lease log to cpu1
  edge flush_rec: writeback log[0, +256] by cpu0.log after record
  edge publish: write tail by cpu0.log after flush_rec writeback tail lease tail to cpu1
  edge poll: read tail by cpu1.log after publish invalidate tail
  edge replay: read log[0, +256] by cpu1.log after poll invalidate log[0, +256]
}
