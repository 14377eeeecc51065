# A KV spill to persistent CXL memory takes its checksum first and compresses afterwards, so the
# checksum covers bytes that are never stored: a reader that verifies the persisted block always
# fails (or, worse, the check is skipped). A checksum must come after the last transform that
# changes the bytes, right before `persist`.
policy "checksum-before-compress"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space pmem0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent checksum crc32c
region kv in hbm0 at 0x0 size 1 MiB owner gpu0 init
region saved in pmem0 at 0x80_2000_0000 size 2 MiB owner gpu0

flow spill {
  edge keep: move kv -> saved by gpu0.copy_done transform checksum(crc32c) |> compress(deflate) |> persist  # expect: FX-XF-002
  # ^ `compress` in `keep` changes bytes after their checksum was taken
}
