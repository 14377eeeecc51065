# Fixed twin of fail/checksum-before-last-fragment.fx: the seal waits for both fragments, so the
# checksum is read over the final bytes of the slot and nothing writes them afterwards.
policy "checksum-after-last-fragment"

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
  edge frag1: move kv[1 MiB, +1 MiB] -> ckpt[1 MiB, +1 MiB] by gpu0.copy_done
  edge seal: read ckpt by gpu0.copy_done after frag0, frag1 transform checksum(crc32c) |> persist
}
