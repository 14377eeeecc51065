# Incident (packet DMA): a per-queue receive counter is read as if one slot were the total.
# Counters are kept in a per-CPU (here per-device) map so each RX queue updates its own slot
# without locks; a monitoring program looks up the entry and takes the value it gets, its own
# slot, as the total, so the rate it reports is one queue's.
# Fix: aggregate every slot, after the writers.
policy "per-queue-counter-read-as-one"

fabric {
  device nic0: nic hooks [rx]
  device nic1: nic hooks [rx]
  device cpu0: cpu hooks [launch]
  link nic0 -- cpu0 : pcie ordered
  link nic1 -- cpu0 : pcie ordered
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region rxq0 in host0 at 0x1_0000_0000 size 64 KiB owner nic0
region rxq1 in host0 at 0x1_0001_0000 size 64 KiB owner nic1
region report in host0 at 0x1_0002_0000 size 4 KiB owner cpu0
map rx_pkts: array<u32, u64>[4] class per_device merge sum

flow rx {
  edge q0: write rxq0 by nic0.rx update rx_pkts[0] = 1
  edge q1: write rxq1 by nic1.rx update rx_pkts[0] = 1
  edge mon: write report by cpu0.launch after q0, q1 map_read rx_pkts[0]  # expect: FX-MAP-004
  # ^ `mon` reads per-device map `rx_pkts[0]` as one value, but `nic0`, `nic1` write their own slots
}
