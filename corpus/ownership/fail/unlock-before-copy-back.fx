# A swapped-out KV block lives in page-locked host memory. The host posts the descriptor for the
# asynchronous copy back to the GPU, then unlocks the pages (`release ... unlock`) without waiting
# for the copy to be acknowledged. Unlocked pages are evictable: the kernel may move or swap them
# while the DMA still reads them. Unlock only after the copy back has completed.
policy "unlock-before-copy-back"

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
  edge unlock: release kv_host unlock by cpu0.free after post  # expect: FX-OWN-004
  # ^ `unlock` releases `kv_host` (unlock) while `copy_back` may still use it
}
