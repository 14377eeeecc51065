# The multi-path twin of ordering/ok/rdma-read-into-host-then-cqe.fx: the NIC reaches the host
# over two PCIe links (a multi-host or "socket direct" card with a function on each socket's
# root port, here both on one host). The block's writes and the completion entry may take
# different links, and posted writes are ordered only along one path, so the entry can arrive
# first and the poller reads a stale block. Fix: the host reads a NIC register after the entry,
# before the block (a read completion does not pass the NIC's posted writes on its link):
# `edge drain: flush pcie0 by cpu0.poll after cqe flush pcie0b`, and `use` after `drain`.
policy "rdma-read-cqe-over-another-path"

fabric {
  device cpu0: cpu hooks [poll]
  device nic0: nic hooks [rx, tx]
  device nic1: nic hooks [rx, tx]
  device cpu1: cpu hooks [poll]
  link pcie0 = cpu0 -- nic0 : pcie posted
  link pcie0b = cpu0 -- nic0 : pcie posted
  link wire = nic0 -- nic1 : rdma ordered
  link pcie1 = nic1 -- cpu1 : pcie ordered
}
space host0 on cpu0 size 64 GiB
space host1 on cpu1 size 64 GiB
region kv_remote in host1 at 0x1000_0000 size 2 MiB owner nic0 dtype bf16 init
region kv in host0 at 0x1000_0000 size 2 MiB owner nic0 dtype bf16
region cq in host0 at 0x2000_0000 size 4 KiB owner nic0

flow fetch_block {
  edge fetch: move kv_remote -> kv by nic0.rx lease kv to cpu0
  edge cqe: write cq[0, +64] by nic0.tx after fetch notifies fetch
  edge use: read kv by cpu0.poll after cqe  # expect: FX-ORD-003
  # ^ `use` reads bytes that `fetch` wrote over posted link `pcie0` with no flush in between
}
