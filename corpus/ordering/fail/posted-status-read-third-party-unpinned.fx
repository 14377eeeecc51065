# The NIC's engine copies a block from GPU memory into host memory (a third-party transfer: it
# reads the GPU and writes the host), then the host reads the NIC's status register and the block.
# The copy pins no route, so fxverify does not take the NIC as the engine that issues its writes
# (it may only have started a copy another device makes): they may cross the links between the
# copy's ends (the GPU's side of the switch), where the completion of the status read, which
# comes from the NIC's port, does not follow them. Flush the NIC's link after the copy, or pin
# the copy through the NIC where the fabric allows it. Fixed twin:
# ok/posted-status-read-third-party-pinned.fx.
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
  edge use: read frame by cpu0.irq after status  # expect: FX-ORD-003
  # ^ `use` reads bytes that `land` wrote over posted link `d` with no flush in between
}
