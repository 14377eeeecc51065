# Incident (packet DMA): an AF_XDP application takes a frame from the RX ring and puts its
# address back on the fill ring right away, before its worker has finished parsing the packet.
# The fill ring gives the frame back to the NIC, whose next receive DMA overwrites the packet
# under the worker.
# Fix: return the frame to the fill ring only after the worker is done with it.
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
  edge parse0: move frame[5] -> parsed by cpu0.launch after rx0  # expect: FX-OWN-001, FX-OWN-002, FX-OWN-004, FX-INIT-001
  # ^ `parse0` reads byte 0x100005000 of `frame[5]`, which no edge writes in its allocation: `rx0` wrote it before `fill1` allocated it again
  # ^ `parse0` reads `frame[5]` from `cpu0`, which neither owns nor leases it then
  # ^ `parse0` accesses `frame[5]` while `rx1` is handing it off
  # ^ `parse0` may use `frame[5]` while `refill` releases it
  edge refill: release frame[5] return_pool by cpu0.free after rx0
  edge fill1: alloc frame[5] to nic0 by nic0.dma_done after refill
  edge rx1: write frame[5] by nic0.rx after fill1 handoff frame[5]: nic0 -> cpu0  # expect: FX-ORD-002
  # ^ data race (read-write) on `frame[5]`: `parse0` and `rx1` may overlap in time
}
