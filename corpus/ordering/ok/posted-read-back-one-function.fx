# Fixed twin of fail/posted-read-back-over-another-function.fx: the driver binds both the receive
# and the hairpin read to the function under socket 0 (`via pf0` on both). Now the read request
# travels the same link as the posted writes, right behind them, and PCIe does not let a read
# pass posted writes on one path: the read sees the whole frame with no flush. (Flushing `pf0`
# after the write and reading after the flush fixes it too, whatever route the read takes.)
policy "posted-read-back-one-function"

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
  edge land: move frame_in -> ring by nic0.rx via pf0
  edge resend: move ring -> frame_out by nic0.tx after land via pf0
}
