# A dual-port ("socket direct") NIC has one PCIe function under each CPU socket. It lands a
# received frame in socket 0's memory and then reads the frame back to send it out again (a
# hairpin). Neither transfer names its route, so each may use either function: the write may go
# through `pf0` while the read goes through `pf1` and the inter-socket link. PCIe keeps a read
# behind the same requester's posted writes only along one path, so the read can overtake the
# frame and send stale bytes. The same device doing both is not enough.
policy "posted-read-back-over-another-function"

fabric {
  device nic0: nic hooks [rx, tx]
  device cpu0: cpu hooks [run]
  device cpu1: cpu hooks [run]
  link pf0 = nic0 -- cpu0 : pcie posted
  link pf1 = nic0 -- cpu1 : pcie posted
  link upi0 = cpu0 -- cpu1 : smp ordered
}
space port0 on nic0 size 1 GiB init
space dram0 on cpu0 base 0x1_0000_0000 size 64 GiB
region frame_in in port0 at 0x0 size 4 KiB owner nic0
region frame_out in port0 at 0x1_0000 size 4 KiB owner nic0
region ring in dram0 at 0x1_0000_0000 size 4 KiB owner nic0

flow hairpin {
  edge land: move frame_in -> ring by nic0.rx
  edge resend: move ring -> frame_out by nic0.tx after land  # expect: FX-ORD-003
  # ^ `resend` reads bytes that `land` wrote over posted link `pf0` with no flush in between
}
