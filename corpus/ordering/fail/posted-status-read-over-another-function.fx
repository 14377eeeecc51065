# A dual-port NIC with one PCIe function under each CPU socket lands a frame in socket 0's memory
# through `pf0` and raises a pin-based interrupt. The handler reads the NIC's interrupt status
# register to push the frame into memory, but socket 0 reaches the NIC through `pf0` and through
# the inter-socket link and `pf1`: the read may go the other way, and its completion then does
# not follow the frame (PCIe orders a completion behind posted writes only along one path). The
# handler may read the frame before it is in memory. Flush `pf0`, or read the status register
# over the frame's one path. Fixed twin: ok/posted-status-read-before-host-read.fx (one function).
policy "posted-status-read-over-another-function"

fabric {
  device nic0: nic hooks [rx]
  device cpu0: cpu hooks [irq]
  device cpu1: cpu hooks [irq]
  link pf0 = nic0 -- cpu0 : pcie posted
  link pf1 = nic0 -- cpu1 : pcie posted
  link upi0 = cpu0 -- cpu1 : smp ordered
}
space nicbar on nic0 size 16 MiB
space dram0 on cpu0 base 0x1_0000_0000 size 64 GiB
region frame_src in nicbar at 0x8000 size 4 KiB owner nic0 init
region icr in nicbar at 0x0 size 4 owner cpu0 init  # the interrupt cause register
region frame in dram0 at 0x1_0000_0000 size 4 KiB owner nic0

flow recv {
  edge land: move frame_src -> frame by nic0.rx via pf0 lease frame to cpu0
  edge status: read icr by cpu0.irq after land
  edge use: read frame by cpu0.irq after status  # expect: FX-ORD-003
  # ^ `use` reads bytes that `land` wrote over posted link `pf0` with no flush in between
}
