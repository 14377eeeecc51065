# A NIC behind a PCIe switch lands a block in host memory and writes a completion entry for it;
# the host polls the entry, then reads the block. The switch's upstream port runs with Relaxed
# Ordering (`unordered`): a posted write may pass another there (PCIe Base Specification, section
# 2.4.1), so the entry may arrive before the block. Compare ok/rdma-read-into-host-then-cqe.fx,
# whose one path keeps its order. Flush the NIC's link before the entry, or keep the link ordered.
policy "rdma-cqe-over-unordered-hop"

fabric {
  device cpu0: cpu hooks [poll]
  device nic0: nic hooks [rx, tx]
  device sw0: pcie_switch
  link down0 = nic0 -- sw0 : pcie posted
  link up0 = sw0 -- cpu0 : pcie unordered
}
space host0 on cpu0 size 64 GiB
space nicmem on nic0 size 16 MiB
region src in nicmem at 0x8000 size 4 KiB owner nic0 init
region kv in host0 at 0x1000_0000 size 4 KiB owner nic0
region cq in host0 at 0x2000_0000 size 4 KiB owner nic0

flow f {
  edge fetch: move src -> kv by nic0.rx lease kv to cpu0
  edge cqe: write cq[0, +64] by nic0.tx after fetch notifies fetch lease cq to cpu0
  edge use: read kv by cpu0.poll after cqe  # expect: FX-ORD-003
  # ^ `use` reads bytes that `fetch` wrote over posted link `down0` with no flush in between
}
