# A dual-port NIC with one PCIe function under each CPU socket lands a message in socket 0's
# memory through `pf0`, then issues a "flushing read" of the buffer before handing it to the
# host. The read names no route, so it may go through `pf1` and the inter-socket link: on
# another path it does not follow the posted writes (PCIe orders a read behind posted writes
# only along one path), so the host may read the buffer before the message is in it. Pin the
# read to the write's function (`via pf0`), or flush `pf0`. Fixed twin:
# ok/posted-flushing-read-before-host-read.fx (one function).
policy "posted-flushing-read-over-another-function"

fabric {
  device nic0: nic hooks [rx, tx]
  device cpu0: cpu hooks [poll]
  device cpu1: cpu hooks [poll]
  link pf0 = nic0 -- cpu0 : pcie posted
  link pf1 = nic0 -- cpu1 : pcie posted
  link upi0 = cpu0 -- cpu1 : smp ordered
}
space nicmem on nic0 size 16 MiB
space dram0 on cpu0 base 0x1_0000_0000 size 64 GiB
region msg_src in nicmem at 0x8000 size 4 KiB owner nic0 init
region scratch in nicmem at 0x0 size 64 owner nic0
region buf in dram0 at 0x1_0000_0000 size 4 KiB owner nic0

flow recv {
  edge land: move msg_src -> buf by nic0.rx via pf0
  edge flushing_read: move buf[0, +64] -> scratch by nic0.tx after land lease buf to cpu0  # expect: FX-ORD-003
  # ^ `flushing_read` reads bytes that `land` wrote over posted link `pf0` with no flush in between
  edge use: read buf by cpu0.poll after flushing_read  # expect: FX-ORD-003
  # ^ `use` reads bytes that `land` wrote over posted link `pf0` with no flush in between
}
