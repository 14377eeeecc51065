# The librpma read-after-write flush, with no route pinned. The responder NIC `nic1` drives both
# transfers between the hosts: the RDMA WRITE into persistent memory and the RDMA READ of its
# first 64 B. Neither pins its route with `via`, but the fabric is a chain: the only path between
# the two hosts passes through `nic1`, and the bytes reach it (or leave it) over the network link
# `wire`, so `nic1` terminates the transport and its own engine issues the writes, and then the
# read request, over `srv` (vocab.NETWORK_KINDS: as if both were pinned to the chain). The
# request cannot pass the posted writes on that one link (PCIe Base Specification, section
# 2.4.1), so when the READ completes the record is in the persistence domain. Twin with pinned
# routes: corpus/incidents/ok/rdma-pmem-record-acked-without-flush.fx. Over memory links only, the
# device named by `by` may only have started another engine's transfer:
# fail/cqe-after-copy-beside-the-nic.fx.
policy "rdma-flushing-read-unpinned-one-path"

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
region echo in host0 at 0x1_2000_0000 size 64 owner nic1
region plog in pmem1 at 0x40_0000_0000 size 4 KiB owner nic1  # the MR registered for remote writes

flow replicate {
  edge post: write ack by cpu0.launch lease rec to nic1
  edge wr: move rec -> plog by nic1.rx after post transform persist
  edge rflush: move plog[0, +64] -> echo by nic1.tx after wr  # the flushing RDMA READ
  edge done: write ack by cpu0.launch after rflush
}
