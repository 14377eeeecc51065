# An RDMA READ fetches a KV block from the prefill node's host memory into this host's memory.
# The NIC writes the block into `kv`, then the completion entry into the completion queue, both
# as posted writes over `pcie0`, the only path from the NIC to the host; the host's poller waits
# for that entry (`after cqe`) and then reads the block. Posted writes of one requester along one
# path arrive in order (PCIe ordering rules: the producer/consumer model), so the entry's arrival
# brings the block before it: no flush is needed. This is what every verbs consumer that polls
# its completion queue relies on. Twins: fail/rdma-read-into-gpu-then-flag.fx (GPU memory may see
# the writes out of order) and fail/rdma-read-cqe-over-another-path.fx (two paths to the host).
policy "rdma-read-into-host-then-cqe"

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
region kv_remote in host1 at 0x1000_0000 size 2 MiB owner nic0 dtype bf16 init
region kv in host0 at 0x1000_0000 size 2 MiB owner nic0 dtype bf16
region cq in host0 at 0x2000_0000 size 4 KiB owner nic0

flow fetch_block {
  edge fetch: move kv_remote -> kv by nic0.rx lease kv to cpu0
  edge cqe: write cq[0, +64] by nic0.tx after fetch notifies fetch
  edge use: read kv by cpu0.poll after cqe
}
