# A NIC with a pin-based (INTx) interrupt lands a received frame in host memory over a posted
# PCIe link, then raises the interrupt. The interrupt may overtake the frame, so the handler first
# reads the NIC's interrupt status register: the read's completion comes back from the NIC along
# the one path the frame took, behind it, and a completion does not pass a posted write (PCIe Base
# Specification, section 2.4.1). Once the read returns, the frame is in memory and the handler
# reads it with no flush of the link (Linux Documentation/PCI/msi-howto.rst, "Why use MSIs?").
# Failing twin: fail/posted-status-read-over-another-function.fx.
policy "posted-status-read-before-host-read"

fabric {
  device cpu0: cpu hooks [irq]
  device nic0: nic hooks [rx]
  link pcie0 = cpu0 -- nic0 : pcie posted
}
space host0 on cpu0 size 64 GiB
space nicbar on nic0 size 16 MiB
region frame_src in nicbar at 0x8000 size 4 KiB owner nic0 init
region icr in nicbar at 0x0 size 4 owner cpu0 init  # the interrupt cause register
region frame in host0 at 0x1000_0000 size 4 KiB owner nic0

flow recv {
  edge land: move frame_src -> frame by nic0.rx lease frame to cpu0
  edge status: read icr by cpu0.irq after land
  edge use: read frame by cpu0.irq after status
}
