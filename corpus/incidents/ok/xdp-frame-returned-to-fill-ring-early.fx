# Fixed twin of fail/xdp-frame-returned-to-fill-ring-early.fx: the frame goes back to the fill ring
# after the worker has parsed it (`refill` is `after parse0`).
policy "xdp-frame-returned-to-fill-ring-early"

fabric {
  device cpu0: cpu hooks [launch, free]
  device nic0: nic hooks [rx, dma_done]
  link cpu0 -- nic0 : pcie ordered
}
space umem on cpu0 base 0x1_0000_0000 size 64 MiB
space heap on cpu0 base 0x2_0000_0000 size 64 MiB
region frame[f in 0..8] in umem at 0x1_0000_0000 + f * 4 KiB size 4 KiB owner nic0 pooled
region parsed in heap at 0x2_0000_0000 size 4 KiB owner cpu0

flow rx {
  edge fill0: alloc frame[5] to nic0 by nic0.dma_done
  edge rx0: write frame[5] by nic0.rx after fill0 handoff frame[5]: nic0 -> cpu0
  edge parse0: move frame[5] -> parsed by cpu0.launch after rx0
  edge refill: release frame[5] return_pool by cpu0.free after parse0
  edge fill1: alloc frame[5] to nic0 by nic0.dma_done after refill
  edge rx1: write frame[5] by nic0.rx after fill1 handoff frame[5]: nic0 -> cpu0
}
