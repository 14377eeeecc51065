# The interrupt handler of ok/posted-status-read-before-host-read.fx, with the NIC behind a PCIe
# switch whose upstream port runs with Relaxed Ordering (`unordered`): there a completion may pass
# the posted writes ahead of it (PCIe Base Specification, section 2.4.1), so the status register's
# value can reach the host before the frame does, and the handler may read the frame too early.
# Flush the NIC's link after the frame, or keep the upstream link ordered.
policy "posted-status-read-unordered-hop"

fabric {
  device cpu0: cpu hooks [irq]
  device nic0: nic hooks [rx]
  device sw0: pcie_switch
  link down0 = nic0 -- sw0 : pcie posted
  link up0 = sw0 -- cpu0 : pcie unordered
}
space host0 on cpu0 size 64 GiB
space nicbar on nic0 size 16 MiB
region frame_src in nicbar at 0x8000 size 4 KiB owner nic0 init
region icr in nicbar at 0x0 size 4 owner cpu0 init  # the interrupt cause register
region frame in host0 at 0x1000_0000 size 4 KiB owner nic0

flow recv {
  edge land: move frame_src -> frame by nic0.rx lease frame to cpu0
  edge status: read icr by cpu0.irq after land
  edge use: read frame by cpu0.irq after status  # expect: FX-ORD-003
  # ^ `use` reads bytes that `land` wrote over posted link `down0` with no flush in between
}
