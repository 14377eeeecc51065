# The NIC's engine copies a block from GPU memory into host memory, pinned through the NIC
# (`via`): its writes leave the NIC toward the host over `p0` alone, the one path between the NIC
# and the host. The host's read of the NIC's status register returns along that path behind them
# (PCIe Base Specification, section 2.4.1), so the host reads the block with no flush. The pin
# states that the NIC's engine moves the bytes; unpinned, the NIC may only have started the copy
# (failing twin: fail/posted-status-read-third-party-unpinned.fx, under a switch).
policy "posted-status-read-third-party-pinned"

fabric {
  device cpu0: cpu hooks [irq]
  device nic0: nic hooks [rx]
  device gpu0: gpu hooks [launch]
  link g0 = gpu0 -- nic0 : pcie ordered
  link p0 = nic0 -- cpu0 : pcie posted
}
space host0 on cpu0 size 64 GiB
space nicbar on nic0 size 16 MiB
space hbm on gpu0 size 16 GiB
region gsrc in hbm at 0x8000 size 4 KiB owner nic0 init
region icr in nicbar at 0x0 size 4 owner cpu0 init  # the interrupt cause register
region frame in host0 at 0x1000_0000 size 4 KiB owner nic0

flow recv {
  edge land: move gsrc -> frame by nic0.rx via g0, p0 lease frame to cpu0
  edge status: read icr by cpu0.irq after land
  edge use: read frame by cpu0.irq after status
}
