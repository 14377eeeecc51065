# Incident (packet DMA): a driver pushes TX descriptors straight into the NIC's device memory
# through a write-combining mapping (a low-latency queue) and then rings the doorbell. Write-
# combined stores are posted and may still sit in the CPU's buffers; without a store fence
# between the descriptor writes and the doorbell, the NIC can fetch a partly written descriptor.
# Fix: fence (flush the write-combining buffers to the device) before the NIC reads.
policy "nic-wc-descriptor-doorbell-without-fence"

fabric {
  device cpu0: cpu hooks [launch]
  device nic0: nic hooks [tx, dma_done, doorbell]
  link bar0 = cpu0 -- nic0 : pcie posted
}
space nicmem on nic0 base 0x20_0000_0000 size 1 MiB
region llq in nicmem at 0x20_0000_0000 size 4 KiB owner cpu0
region db in nicmem at 0x20_0008_0000 size 8 B owner cpu0

flow tx {
  edge push: write llq by cpu0.launch lease llq to nic0
  edge ring: write db by cpu0.launch after push
  edge fetch: read llq by nic0.tx after ring  # expect: FX-ORD-003
  # ^ `fetch` reads bytes that `push` wrote over posted link `bar0` with no flush in between
}
