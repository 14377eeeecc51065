# The flushing read of ok/posted-flushing-read-before-host-read.fx, with the NIC behind a PCIe
# switch whose upstream link is declared `unordered`: it keeps no order, so the NIC's read of the
# buffer is not ordered behind its own posted writes there, and neither the read nor the host's
# read after it is sure to find the message. Flush the link, or keep it ordered.
policy "posted-flushing-read-unordered-hop"

fabric {
  device cpu0: cpu hooks [poll]
  device nic0: nic hooks [rx, tx]
  device sw0: pcie_switch
  link down0 = nic0 -- sw0 : pcie posted
  link up0 = sw0 -- cpu0 : pcie unordered
}
space host0 on cpu0 size 64 GiB
space nicmem on nic0 size 16 MiB
region msg_src in nicmem at 0x8000 size 4 KiB owner nic0 init
region buf in host0 at 0x1000_0000 size 4 KiB owner nic0
region scratch in nicmem at 0x0 size 64 owner nic0

flow recv {
  edge land: move msg_src -> buf by nic0.rx
  edge flushing_read: move buf[0, +64] -> scratch by nic0.tx after land lease buf to cpu0  # expect: FX-ORD-003
  # ^ `flushing_read` reads bytes that `land` wrote over posted link `down0` with no flush in between
  edge use: read buf by cpu0.poll after flushing_read  # expect: FX-ORD-003
  # ^ `use` reads bytes that `land` wrote over posted link `down0` with no flush in between
}
