# Remote persistence over RDMA with librpma's read-after-write flush (rpma_flush() where the
# responder offers no native flush): the client RDMA-WRITEs a log record into the server's
# persistent memory, RDMA-READs part of it back, and acknowledges the record once the READ
# completes. But the server's NIC `nic1` is a socket-direct NIC with two PCIe functions, and the
# READ is served through the other one, `pf1`. PCIe orders a read behind the same requester's
# posted writes only along one path (PCIe Base Specification, section 2.4.1): the READ may
# complete while the record's writes through `pf0` are still on their way, and a power loss then
# loses an acknowledged record. Fix: ordering/ok/persist-rdma-read-same-function.fx (the READ
# pinned through `pf0`, as the WRITE is).
policy "persist-rdma-read-other-function"

fabric {
  device cpu0: cpu hooks [launch]
  device nic0: nic hooks [tx, rx]
  device nic1: nic hooks [rx, tx]
  device cpu1: cpu hooks [launch]
  link host = nic0 -- cpu0 : pcie ordered
  link wire = nic0 -- nic1 : rdma ordered
  link pf0 = nic1 -- cpu1 : pcie posted
  link pf1 = nic1 -- cpu1 : pcie posted  # the second function of a socket-direct NIC
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
space pmem1 on cpu1 base 0x40_0000_0000 size 256 GiB persistent
region rec in host0 at 0x1_0000_0000 size 4 KiB owner cpu0 init
region ack in host0 at 0x1_1000_0000 size 64 owner cpu0
region echo in host0 at 0x1_2000_0000 size 64 owner nic1
region plog in pmem1 at 0x40_0000_0000 size 4 KiB owner nic1

flow replicate {
  edge post: write ack by cpu0.launch lease rec to nic1
  edge wr: move rec -> plog by nic1.rx after post via host, wire, pf0 transform persist  # expect: FX-ORD-003
  # ^ `wr` persists bytes over posted link `pf0`, and no flush of `pf0` follows it
  edge rflush: move plog[0, +64] -> echo by nic1.tx after wr via pf1, wire, host  # expect: FX-ORD-003
  # ^ `rflush` reads bytes that `wr` wrote over posted link `pf0` with no flush in between
  edge done: write ack by cpu0.launch after rflush
}
