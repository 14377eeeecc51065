# Incident (packet DMA): the port's MTU is raised to 9000 for jumbo frames, but the receive
# queue still posts 2 KiB buffers and scatter (multi-buffer receive) is not enabled. A 9 KB
# frame is written by DMA past the end of its 2 KiB buffer into whatever follows it.
# Fix: post buffers that hold the largest frame the port accepts (or enable scatter).
policy "nic-jumbo-frame-into-2k-buffer"

fabric {
  device cpu0: cpu hooks [launch]
  device nic0: nic hooks [rx, dma_done]
  link cpu0 -- nic0 : pcie ordered
}
space nicmem on nic0 base 0x20_0000_0000 size 1 MiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region frame in nicmem at 0x20_0000_0000 size 9018 B owner nic0 init
region mbuf in host0 at 0x1_0000_0000 size 2 KiB owner nic0

flow rx {
  edge land: move frame -> mbuf by nic0.rx  # expect: FX-XF-001
  # ^ `land` can write up to 9018 B into a 2048 B destination: any input of 2049 B or more overflows it (the source holds 9018 B)
}
