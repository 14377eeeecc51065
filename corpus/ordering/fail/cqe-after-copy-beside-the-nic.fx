# The NIC's engine copies a block from GPU memory into host memory (a third-party transfer: it
# reads the GPU and writes the host), then writes a completion entry, and the host polls the
# entry before it reads the block. The GPU, the NIC and the host hang off one switch, and the
# copy pins no route. fxverify does not take the device named by `by` as the engine that issues
# a third-party transfer's writes unless `via` pins the route through it: the NIC may only have
# started a copy another engine makes (as a GPU starts an NVMe read that the SSD writes into
# host memory), whose writes enter the switch from another port than the entry and are not
# ordered with it (PCIe Base Specification, section 2.4.1: ordering holds along one path). A
# completion entry counts only when the write and the entry have one route, the same links
# (specs/obligations.md section 1, completion entries). Here a route through the NIC would visit
# the switch twice, so it cannot be pinned: flush `up` after the copy, from the host.
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
  edge use: read frame by cpu0.poll after cqe  # expect: FX-ORD-003
  # ^ `use` reads bytes that `land` wrote over posted link `up` with no flush in between
}
