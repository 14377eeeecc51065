# The fix of ordering/fail/persist-read-back-over-cxl-mem.fx: the host flushes the link after
# persisting the record (`flush up0` on its own edge: a CXL Global Persistent Flush, or CLWB and a
# fence on every line written), and only then loads the header. The load is no longer what the
# record's durability rests on.
policy "persist-over-cxl-mem-flushed"

fabric {
  device cpu0: cpu hooks [launch]
  device cxl0: cxl_mem hooks [near_mem]
  link up0 = cpu0 -- cxl0 : cxl posted
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
space pmem0 on cxl0 base 0x80_0000_0000 size 1 GiB persistent
region src in host0 at 0x1_0000_0000 size 4 KiB owner cpu0 init
region rec in pmem0 at 0x80_0000_0000 size 4 KiB owner cpu0
region hdr in pmem0 at 0x80_0010_0000 size 64 owner cpu0 init

flow append {
  edge put: move src -> rec by cpu0.launch transform persist flush up0
  edge peek: read hdr by cpu0.launch after put
}
