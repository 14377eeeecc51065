# Fixed twin of fail/nic-jumbo-frame-into-2k-buffer.fx: the receive buffers hold the largest frame the
# port accepts (9018 B with headers and CRC, in a 9 KiB buffer).
policy "nic-jumbo-frame-into-2k-buffer"

fabric {
  device cpu0: cpu hooks [launch]
  device nic0: nic hooks [rx, dma_done]
  link cpu0 -- nic0 : pcie ordered
}
space nicmem on nic0 base 0x20_0000_0000 size 1 MiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region frame in nicmem at 0x20_0000_0000 size 9018 B owner nic0 init
region mbuf in host0 at 0x1_0000_0000 size 9 KiB owner nic0

flow rx {
  edge land: move frame -> mbuf by nic0.rx
}
