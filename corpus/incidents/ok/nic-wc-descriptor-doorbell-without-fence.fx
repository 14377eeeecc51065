# Fixed twin of fail/nic-wc-descriptor-doorbell-without-fence.fx: the doorbell edge fences first, a
# flush of the posted BAR link, so the descriptor is in device memory before the NIC fetches it.
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
  edge ring: write db by cpu0.launch after push flush bar0
  edge fetch: read llq by nic0.tx after ring
}
