# The NIC's engine copies a block from GPU memory into host memory, then the host reads the NIC's
# status register and the block. The NIC reaches the host over two paths: through the switch
# (`d`, `up`) and over a second PCIe function (`pf1`). The completion of a register read keeps
# the writes ahead of it only along one path (PCIe Base Specification, section 2.4.1), and here
# neither the copy's writes nor the status read has one path: the block may still be in flight
# on the other. Flush both links after the copy, or give the NIC one path. Twin with one path:
# ok/posted-status-read-third-party-unpinned.fx.
policy "posted-status-read-third-party-two-functions"

fabric {
  device cpu0: cpu hooks [irq]
  device nic0: nic hooks [rx]
  device gpu0: gpu hooks [launch]
  device sw0: pcie_switch
  link g = gpu0 -- sw0 : pcie ordered
  link d = nic0 -- sw0 : pcie posted
  link up = sw0 -- cpu0 : pcie posted
  link pf1 = nic0 -- cpu0 : pcie posted
}
space host0 on cpu0 size 64 GiB
space nicbar on nic0 size 16 MiB
space hbm on gpu0 size 16 GiB
region gsrc in hbm at 0x8000 size 4 KiB owner nic0 init
region icr in nicbar at 0x0 size 4 owner cpu0 init  # the interrupt cause register
region frame in host0 at 0x1000_0000 size 4 KiB owner nic0

flow recv {
  edge land: move gsrc -> frame by nic0.rx lease frame to cpu0
  edge status: read icr by cpu0.irq after land
  edge use: read frame by cpu0.irq after status  # expect: FX-ORD-003
  # ^ `use` reads bytes that `land` wrote over posted link `d` with no flush in between
}
