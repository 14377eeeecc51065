# Selective signalling: two RDMA READs on one queue pair, only the second signalled. Work
# requests of one queue complete in order (`stream qp1`), so when the completion entry for `wr1`
# is written, `wr0` has finished too, and the entry's posted write follows both blocks along the
# NIC's one path into host memory. The host polls the entry and reads the first block: proved
# with no flush, although the entry names only `wr1`. Twin: fail/rdma-unsignalled-on-another-queue.fx.
policy "rdma-selectively-signalled-queue"

fabric {
  device cpu0: cpu hooks [poll]
  device nic0: nic hooks [rx, tx]
  device nic1: nic hooks [rx, tx]
  device cpu1: cpu hooks [poll]
  link pcie0 = cpu0 -- nic0 : pcie posted
  link wire = nic0 -- nic1 : rdma ordered
  link pcie1 = nic1 -- cpu1 : pcie ordered
}
space host0 on cpu0 size 64 GiB
space host1 on cpu1 size 64 GiB
region src0 in host1 at 0x1000_0000 size 64 KiB owner nic0 dtype bf16 init
region src1 in host1 at 0x1001_0000 size 64 KiB owner nic0 dtype bf16 init
region buf0 in host0 at 0x1000_0000 size 64 KiB owner nic0 dtype bf16
region buf1 in host0 at 0x1001_0000 size 64 KiB owner nic0 dtype bf16
region cq in host0 at 0x2000_0000 size 4 KiB owner nic0

flow fetch {
  edge wr0: move src0 -> buf0 by nic0.rx stream qp1 lease buf0 to cpu0
  edge wr1: move src1 -> buf1 by nic0.rx stream qp1 lease buf1 to cpu0
  edge cqe1: write cq[0, +64] by nic0.tx after wr1 notifies wr1 lease cq to cpu0
  edge poll: read cq[0, +64] by cpu0.poll after cqe1
  edge use0: read buf0 by cpu0.poll after poll
}
