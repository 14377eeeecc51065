# A socket-direct NIC reaches its host over two PCIe functions, `pf0` and `pf1`, two links
# between the same two devices. The NIC writes a received frame into host memory and then its
# completion entry, both pinned to `pf0`; the host polls the entry, then reads the frame. Both
# edges' posted writes take one route, the same link, so the entry cannot pass the frame (PCIe
# Base Specification, section 2.4.1: posted requests do not pass posted requests): when the host
# sees the entry, the frame is there. Twin with the entry over the other function:
# fail/cqe-socket-direct-other-function.fx.
policy "cqe-socket-direct-same-function"

fabric {
  device cpu0: cpu hooks [poll]
  device nic0: nic hooks [rx, tx]
  link pf0 = nic0 -- cpu0 : pcie posted
  link pf1 = nic0 -- cpu0 : pcie posted
}
space host0 on cpu0 size 64 GiB
region frame in host0 at 0x1000_0000 size 4 KiB owner nic0
region cq in host0 at 0x2000_0000 size 4 KiB owner nic0

flow recv {
  edge land: write frame by nic0.rx via pf0 lease frame to cpu0
  edge cqe: write cq[0, +64] by nic0.tx after land via pf0 notifies land
  edge use: read frame by cpu0.poll after cqe
}
