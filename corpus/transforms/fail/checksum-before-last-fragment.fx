# A checkpoint is assembled in place in persistent CXL memory from two DMA fragments, then sealed
# with a checksum read over the whole slot. The seal waits for the first fragment only; the second
# is ordered after the seal, so there is no race to report, yet the checksum describes bytes that
# the second fragment then replaces. A checksum must be taken over final bytes: after the last
# write to them has landed (or after a reader consumed them).
policy "checksum-before-last-fragment"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space pmem0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent checksum crc32c
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 init
region ckpt in pmem0 at 0x80_2000_0000 size 2 MiB owner gpu0

flow checkpoint {
  edge frag0: move kv[0, +1 MiB] -> ckpt[0, +1 MiB] by gpu0.copy_done
  edge seal: read ckpt by gpu0.copy_done after frag0 transform checksum(crc32c) |> persist  # expect: FX-INIT-001
  # ^ `seal` reads byte 0x8020100000 of `ckpt`, which no edge writes before it
  edge frag1: move kv[1 MiB, +1 MiB] -> ckpt[1 MiB, +1 MiB] by gpu0.copy_done after seal  # expect: FX-XF-002
  # ^ `frag1` writes bytes after `seal` took their checksum
}
