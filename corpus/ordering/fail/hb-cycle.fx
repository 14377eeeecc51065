# Two edges that each wait for the other can never start: their `after` clauses form a
# happens-before cycle. Here the KV spill waits for the CXL-side verify of the spilled block, and
# the verify waits for the spill. No schedule exists, so the other ordering obligations are vacuous
# until the cycle is broken; the primary span is the first edge of the cycle.
policy "hb-cycle"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 dtype bf16 init
region pool in hdm0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16

flow spill {
  edge spill: move kv -> pool by gpu0.copy_done after verify  # expect: FX-ORD-001
  # ^ happens-before cycle: `spill` -> `verify` -> `spill`
  edge verify: read pool by gpu0.launch after spill
}
