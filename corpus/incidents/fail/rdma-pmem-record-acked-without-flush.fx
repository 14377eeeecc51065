# Incident (RDMA): a replication client RDMA-WRITEs a log record into a server's persistent
# memory and treats the WRITE's completion as durability. The completion only means the responder
# NIC accepted the data: its posted PCIe writes may still sit in the NIC or the root complex when
# power fails, so an acknowledged record is lost. The SNIA NVM Programming Model's remote access
# guidance and librpma's rpma_flush() (RPMA_FLUSH_TYPE_PERSISTENT) exist for exactly this: where
# the responder offers no native flush, they issue an RDMA READ after the WRITE (the
# read-after-write flush) and acknowledge only once it completes.
# Fix: RDMA-READ part of the record back through the same NIC function, then acknowledge.
policy "rdma-pmem-record-acked-without-flush"

fabric {
  device cpu0: cpu hooks [launch]
  device nic0: nic hooks [tx, rx]
  device nic1: nic hooks [rx, tx]
  device cpu1: cpu hooks [launch]
  link host = nic0 -- cpu0 : pcie ordered
  link wire = nic0 -- nic1 : rdma ordered
  link srv = nic1 -- cpu1 : pcie posted
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
space pmem1 on cpu1 base 0x40_0000_0000 size 256 GiB persistent
region rec in host0 at 0x1_0000_0000 size 4 KiB owner cpu0 init
region ack in host0 at 0x1_1000_0000 size 64 owner cpu0
region plog in pmem1 at 0x40_0000_0000 size 4 KiB owner nic1  # the MR registered for remote writes

flow replicate {
  edge post: write ack by cpu0.launch lease rec to nic1
  edge wr: move rec -> plog by nic1.rx after post via host, wire, srv transform persist  # expect: FX-ORD-003
  # ^ `wr` persists bytes over posted link `srv`, and no flush of `srv` follows it
  edge done: write ack by cpu0.launch after wr  # the WRITE's completion polled: "durable", reply to the caller
}
