# The NIC's engine copies a block from GPU memory into host memory, then writes a completion
# entry, which the host polls before it reads the block. The NIC reaches the host over two paths:
# through the switch (`d`, `up`) and over a second PCIe function of its own (`pf1`). The copy pins
# no route, so its writes may leave the NIC over `pf1`, while the entry is pinned through the
# switch: posted writes keep their order only along one path (PCIe Base Specification, section
# 2.4.1), and the entry may arrive before the block. Pin both to one path from the NIC: the copy
# `via g, d, pf1` (in through the switch, out over the second function; a route in and out
# through the switch would visit it twice) and the entry `via pf1`. Twin with one path from the
# NIC: ok/cqe-after-copy-beside-the-nic.fx.
policy "cqe-after-copy-two-functions"

fabric {
  device cpu0: cpu hooks [poll]
  device nic0: nic hooks [rx, tx]
  device gpu0: gpu hooks [launch]
  device sw0: pcie_switch
  link g = gpu0 -- sw0 : pcie ordered
  link d = nic0 -- sw0 : pcie ordered
  link up = sw0 -- cpu0 : pcie posted
  link pf1 = nic0 -- cpu0 : pcie posted
}
space host0 on cpu0 size 64 GiB
space hbm on gpu0 size 16 GiB
region gsrc in hbm at 0x8000 size 4 KiB owner nic0 init
region frame in host0 at 0x1000_0000 size 4 KiB owner nic0
region cq in host0 at 0x2000_0000 size 4 KiB owner nic0

flow recv {
  edge land: move gsrc -> frame by nic0.rx lease frame to cpu0
  edge cqe: write cq[0, +64] by nic0.tx after land via d, up notifies land
  edge use: read frame by cpu0.poll after cqe  # expect: FX-ORD-003
  # ^ `use` reads bytes that `land` wrote over posted link `up` with no flush in between
}
