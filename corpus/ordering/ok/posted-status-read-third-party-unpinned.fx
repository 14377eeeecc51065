# The NIC's engine copies a block from GPU memory into host memory (a third-party transfer: it
# reads the GPU and writes the host), then the host reads the NIC's status register and the block.
# The GPU, the NIC and the host hang off one switch: the path between the copy's ends is beside
# the NIC, and the copy pins no route. Its writes still leave from the NIC's engine over `d`,
# `up`, the one path from the NIC to the host, and the completion of the status read returns
# along it behind them (PCIe Base Specification, section 2.4.1), so the host reads the block with
# no flush. Twins: ok/posted-status-read-third-party-pinned.fx (a chain, pinned), and
# fail/posted-status-read-third-party-two-functions.fx (a second path from the NIC).
policy "posted-status-read-third-party-unpinned"

fabric {
  device cpu0: cpu hooks [irq]
  device nic0: nic hooks [rx]
  device gpu0: gpu hooks [launch]
  device sw0: pcie_switch
  link g = gpu0 -- sw0 : pcie ordered
  link d = nic0 -- sw0 : pcie posted
  link up = sw0 -- cpu0 : pcie posted
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
  edge use: read frame by cpu0.irq after status
}
