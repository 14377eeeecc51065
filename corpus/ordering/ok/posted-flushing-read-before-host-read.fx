# A NIC lands a received message in host memory over a posted PCIe link, then reads a word of
# the same buffer back over the same link (a "flushing read"): a read request cannot pass the
# posted writes ahead of it on one path (PCIe Base Specification, section 2.4.1), so its
# completion means the message is in memory. Only then does it hand the buffer to the host, which
# reads it with no flush of the link: the read-back did what a flush does. Failing twin:
# fail/posted-flushing-read-over-another-function.fx.
policy "posted-flushing-read-before-host-read"

fabric {
  device cpu0: cpu hooks [poll]
  device nic0: nic hooks [rx, tx]
  link pcie0 = cpu0 -- nic0 : pcie posted
}
space host0 on cpu0 size 64 GiB
space nicmem on nic0 size 16 MiB
region msg_src in nicmem at 0x8000 size 4 KiB owner nic0 init
region buf in host0 at 0x1000_0000 size 4 KiB owner nic0
region scratch in nicmem at 0x0 size 64 owner nic0

flow recv {
  edge land: move msg_src -> buf by nic0.rx
  edge flushing_read: move buf[0, +64] -> scratch by nic0.tx after land lease buf to cpu0
  edge use: read buf by cpu0.poll after flushing_read
}
