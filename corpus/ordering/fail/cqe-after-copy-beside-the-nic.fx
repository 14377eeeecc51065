# The NIC's engine copies a block from GPU memory into host memory (a third-party transfer: it
# reads the GPU and writes the host), then writes a completion entry, and the host polls the
# entry before it reads the block. The GPU, the NIC and the host hang off one switch, so the path
# between the copy's ends (`g`, `up`) does not pass through the NIC, and the copy pins no route:
# fxverify takes its writes to possibly cross the links between its ends too, coming into the
# switch from the GPU's port, where the entry, which comes from the NIC's port, does not follow
# them. A completion entry counts only when the write and the entry have one route, the same
# links (specs/obligations.md section 1, completion entries). The route through the NIC visits
# the switch twice, so it cannot be pinned (FX-TYP-006): flush `up` after the copy, from the
# host. Twin where the only path passes through the NIC:
# ok/rdma-flushing-read-unpinned-one-path.fx.
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
