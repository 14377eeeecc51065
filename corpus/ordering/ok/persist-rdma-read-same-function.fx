# Remote persistence over RDMA, as librpma's rpma_flush() does it where the responder offers no
# native flush: the client RDMA-WRITEs a log record into the server's persistent memory, then
# RDMA-READs back part of it, and acknowledges the record only after the READ completes (SNIA NVM
# Programming Model, remote access for high availability; the read-after-write flush). The
# server's NIC `nic1` drives both as copies between the two hosts (third-party transfers); its
# PCIe writes into `pmem1` are posted. Both are pinned through `nic1` and over the same function
# `pf0`, so its read request follows its posted writes over that one PCIe link and cannot pass
# them (PCIe Base Specification, section 2.4.1): the READ's completion means the record reached
# the persistence domain. The fix of ordering/fail/persist-rdma-read-other-function.fx.
policy "persist-rdma-read-same-function"

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
  edge wr: move rec -> plog by nic1.rx after post via host, wire, pf0 transform persist
  edge rflush: move plog[0, +64] -> echo by nic1.tx after wr via pf0, wire, host
  edge done: write ack by cpu0.launch after rflush
}
