# Fixed twin of fail/unlock-before-copy-back.fx: the host unlocks the KV block's host pages in the
# edge that handles the copy's acknowledgement, which runs after the copy back has completed. The
# release is written here as a clause (`release kv_host unlock`) of that acknowledgement edge.
policy "unlock-after-copy-back"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [launch, free]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region desc in host0 at 0x1_0000_0000 size 4 KiB owner cpu0
region kv_host in host0 at 0x1_8000_0000 size 2 MiB owner gpu0 dtype bf16 init
region kv_blk in hbm0 at 0x2000_0000 size 2 MiB owner gpu0 dtype bf16

flow swap_in {
  edge post: write desc by cpu0.launch
  edge copy_back: move kv_host -> kv_blk by gpu0.copy_done after post
  edge ack: read desc by cpu0.launch after copy_back release kv_host unlock
}
