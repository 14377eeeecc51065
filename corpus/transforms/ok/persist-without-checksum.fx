# Twin of fail/persist-without-declared-checksum.fx: this pmem window declares no checksum (its
# device checks integrity itself, or the data is a cache that may be lost), so a `persist` into
# it needs none. Only a space that declares `checksum ALGO` requires one.
policy "persist-without-checksum"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space pmem0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent
region kv in hbm0 at 0x0 size 1 MiB owner gpu0 init
region saved in pmem0 at 0x80_2000_0000 size 1 MiB owner gpu0

flow spill {
  edge keep: move kv -> saved by gpu0.copy_done transform persist
}
