# The host fills a pinned staging buffer and enqueues an asynchronous host-to-device copy of it,
# then frees the pinned buffer as soon as the enqueue returns. The copy engine may not have read
# the buffer yet, so it can copy freed (and reused) pages. A release must happen after every use
# of the region, including copies and DMAs still in flight.
policy "pinned-free-before-copy"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [launch, free]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region pinned in host0 at 0x1_2000_0000 size 8 MiB owner cpu0 dtype bf16
region weights in hbm0 at 0x7000_0000 size 8 MiB owner gpu0 dtype bf16

flow load_weights {
  edge fill: write pinned by cpu0.launch lease pinned to gpu0
  edge h2d: move pinned -> weights by gpu0.copy_done after fill
  edge free_pinned: release pinned free by cpu0.free after fill  # expect: FX-OWN-004
  # ^ `free_pinned` releases `pinned` (free) while `h2d` may still use it
}
