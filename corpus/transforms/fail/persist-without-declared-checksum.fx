# The pmem window declares `checksum crc32c`: whatever is made durable there must carry a crc32c
# over its final bytes (a recovery scan verifies every block). The spill persists without one, so
# a torn or corrupted block would be restored silently. A space that declares a checksum needs
# one of that algorithm before every `persist` into it.
policy "persist-without-declared-checksum"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space pmem0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent checksum crc32c
region kv in hbm0 at 0x0 size 1 MiB owner gpu0 init
region saved in pmem0 at 0x80_2000_0000 size 1 MiB owner gpu0

flow spill {
  edge keep: move kv -> saved by gpu0.copy_done transform persist  # expect: FX-XF-002
  # ^ `keep` persists bytes with no valid `crc32c` checksum over them, which their space requires
}
