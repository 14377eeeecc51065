# The twin of ordering/ok/rdma-selectively-signalled-queue.fx with the unsignalled read posted on
# another queue pair (`stream qp0`): nothing orders `wr0` before the entry for `wr1`, so its
# block may still be on its way when the host sees the entry and reads it: a race with the
# read, a read of bytes not yet written, a lease not yet granted, and no flush of `pcie0`. Fix:
# post both on one queue (completions of one queue are in order), or signal `wr0` and wait for
# its entry too.
policy "rdma-unsignalled-on-another-queue"

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
  edge wr0: move src0 -> buf0 by nic0.rx stream qp0 lease buf0 to cpu0
  edge wr1: move src1 -> buf1 by nic0.rx stream qp1 lease buf1 to cpu0
  edge cqe1: write cq[0, +64] by nic0.tx after wr1 notifies wr1 lease cq to cpu0
  edge poll: read cq[0, +64] by cpu0.poll after cqe1
  edge use0: read buf0 by cpu0.poll after poll  # expect: FX-ORD-002, FX-ORD-003, FX-INIT-001, FX-OWN-001
  # ^ data race (write-read) on `buf0`: `wr0` and `use0` may overlap in time
  # ^ `use0` reads bytes that `wr0` wrote over posted link `pcie0` with no flush in between
  # ^ `use0` reads byte 0x10000000 of `buf0`, bf16 element 0, which no edge writes before it
  # ^ `use0` reads `buf0` from `cpu0`, which neither owns nor leases it then
}
