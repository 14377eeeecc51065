# The NIC's engine copies a block from GPU memory into host memory (a third-party transfer: it
# reads the GPU and writes the host), then writes a completion entry, and the host polls the
# entry before it reads the block. The GPU, the NIC and the host hang off one switch, so the path
# between the copy's ends (`g`, `up`) does not pass through the NIC, and the copy pins no route
# (a route through the NIC would visit the switch twice). The bytes still pass through the NIC's
# engine: it reads the GPU, and its own writes leave the NIC over `d`, `up`, the one path from
# the NIC to the host, the path the entry takes after them (PCIe Base Specification, section
# 2.4.1: posted requests do not pass posted requests). Failing twin, where the NIC has a second
# path to the host: fail/cqe-after-copy-two-functions.fx.
policy "cqe-after-copy-beside-the-nic"

fabric {
  device cpu0: cpu hooks [poll]
  device nic0: nic hooks [rx, tx]
  device gpu0: gpu hooks [launch]
  device sw0: pcie_switch
  link g = gpu0 -- sw0 : pcie ordered
  link d = nic0 -- sw0 : pcie ordered
  link up = sw0 -- cpu0 : pcie posted
}
space host0 on cpu0 size 64 GiB
space hbm on gpu0 size 16 GiB
region gsrc in hbm at 0x8000 size 4 KiB owner nic0 init
region frame in host0 at 0x1000_0000 size 4 KiB owner nic0
region cq in host0 at 0x2000_0000 size 4 KiB owner nic0

flow recv {
  edge land: move gsrc -> frame by nic0.rx lease frame to cpu0
  edge cqe: write cq[0, +64] by nic0.tx after land notifies land
  edge use: read frame by cpu0.poll after cqe
}
