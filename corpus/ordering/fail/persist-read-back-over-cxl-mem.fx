# A host persists a log record into CXL persistent memory over a posted link, then loads the
# log's header, another line of the same expander, and counts that load as the read-after-write
# flush PCIe code uses. Over CXL.mem it is none: the CPU may serve the load from its own cache,
# and CXL.mem orders a read only after writes to the same address, so nothing pushes the record
# into the persistence domain. Only a flush of the link (a CXL Global Persistent Flush, CLWB and
# a fence) makes it durable. The PCIe twin: ok/persist-read-back-same-route.fx.
policy "persist-read-back-over-cxl-mem"

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
  edge put: move src -> rec by cpu0.launch transform persist  # expect: FX-ORD-003
  # ^ `put` persists bytes over posted link `up0`, and no flush of `up0` follows it
  edge peek: read hdr by cpu0.launch after put
}
