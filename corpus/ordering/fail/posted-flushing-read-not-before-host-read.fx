# A NIC lands a received message in host memory over a posted PCIe link and reads a word of the
# buffer back over the same link (a "flushing read"), but the host does not wait for that read:
# it reads the buffer as soon as the landing completed at the NIC, when the posted writes may
# still be on their way. A read-back flushes only for a reader that runs after it completes.
# Fixed twin: ok/posted-flushing-read-before-host-read.fx.
policy "posted-flushing-read-not-before-host-read"

fabric {
  device cpu0: cpu hooks [poll]
  device nic0: nic hooks [rx, tx]
  link pcie0 = cpu0 -- nic0 : pcie posted
}
space host0 on cpu0 size 64 GiB
space nicmem on nic0 size 16 MiB
region msg_src in nicmem at 0x8000 size 4 KiB owner nic0 init
region buf in host0 at 0x1000_0000 size 4 KiB owner nic0
region scratch in nicmem at 0x0 size 64 owner nic0

flow recv {
  edge land: move msg_src -> buf by nic0.rx lease buf to cpu0
  edge flushing_read: move buf[0, +64] -> scratch by nic0.tx after land
  edge use: read buf by cpu0.poll after land  # expect: FX-ORD-003
  # ^ `use` reads bytes that `land` wrote over posted link `pcie0` with no flush in between
}
