# A socket-direct NIC reaches its host over two PCIe functions, `pf0` and `pf1`. The NIC writes a
# received frame into host memory over `pf0`, then its completion entry over `pf1`; the host polls
# the entry, then reads the frame. Posted writes keep their order only along one path (PCIe Base
# Specification, section 2.4.1): the entry over `pf1` may arrive first, and the host reads a frame
# still in flight. Send the entry over the frame's function, or flush `pf0` first. Fixed twin:
# ok/cqe-socket-direct-same-function.fx.
policy "cqe-socket-direct-other-function"

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
  edge cqe: write cq[0, +64] by nic0.tx after land via pf1 notifies land
  edge use: read frame by cpu0.poll after cqe  # expect: FX-ORD-003
  # ^ `use` reads bytes that `land` wrote over posted link `pf0` with no flush in between
}
