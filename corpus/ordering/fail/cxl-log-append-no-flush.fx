# A log shared by two hosts in non-coherent CXL memory. Host A appends a record, then publishes the
# new tail and writes the tail back, but never the record itself. Host B reads the tail and the
# record after invalidating both: the tail is current, the record is whatever was in memory
# before, because A's stores to it never left A's cache.
policy "cxl-log-append-no-flush"

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
  edge publish: write tail by cpu0.log after record writeback tail lease tail to cpu1
  edge poll: read tail by cpu1.log after publish invalidate tail
  edge replay: read log[0, +256] by cpu1.log after poll invalidate log[0, +256]  # expect: FX-ORD-005
  # ^ `replay` on `cpu1` reads bytes of non-coherent `shm0` that `record` wrote on `cpu0`, but not after `cpu0` writes them back
}
