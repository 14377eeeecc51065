# Fixed twin of fail/block-index-out-of-bounds.fx: the last block of a 1 MiB table of 64 KiB
# blocks is index 15, so the read of the partial last block stays inside the region.
policy "block-index-in-bounds"

fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 80 GiB
region kv_pages in hbm0 at 0x6000_0000 size 1 MiB owner gpu0 dtype bf16

flow decode {
  edge fill: write kv_pages by gpu0.launch stream compute
  edge attend: read kv_pages[15 * 64 KiB, +64 KiB] by gpu0.launch stream compute
}
