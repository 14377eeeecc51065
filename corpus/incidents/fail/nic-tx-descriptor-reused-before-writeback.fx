# Incident (packet DMA): a driver's TX ring wraps around and the driver refills a descriptor slot
# for a new packet after ringing the doorbell for the previous one, without checking that the
# NIC has fetched the old descriptor and written back its "done" bit. The NIC may still be
# reading the slot: it transmits a descriptor that is half old, half new.
# Fix: reuse a slot only after the NIC's write-back for it (the done bit) has been seen.
policy "nic-tx-descriptor-reused-before-writeback"

fabric {
  device cpu0: cpu hooks [launch]
  device nic0: nic hooks [tx, dma_done, doorbell]
  link cpu0 -- nic0 : pcie ordered
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region desc[d in 0..2] in host0 at 0x1_0000_0000 + d * 16 B size 16 B owner cpu0
region wb in host0 at 0x1_0001_0000 size 64 B owner nic0

flow tx {
  edge post0: write desc[0] by cpu0.launch lease desc[0] to nic0
  edge fetch0: read desc[0] by nic0.tx after post0
  edge done0: write wb by nic0.dma_done after fetch0
  edge post1: write desc[1] by cpu0.launch after post0 lease desc[1] to nic0
  edge fetch1: read desc[1] by nic0.tx after post1
  edge post2: write desc[0] by cpu0.launch after post1 lease desc[0] to nic0  # expect: FX-ORD-002
  # ^ data race (read-write) on `desc[0]`: `fetch0` and `post2` may overlap in time
}
