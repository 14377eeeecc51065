# Fixed twin of fail/xdp-counter-load-and-store.fx: each CPU's XDP program adds one to the
# packet count atomically (`__sync_fetch_and_add` on the map value, an `update` merging with
# `sum`), so the two increments commute and neither is lost.
policy "xdp-counter-atomic-add"

fabric {
  device nic0: nic hooks [rx]
  device cpu0: cpu hooks [xdp, user]
  device cpu1: cpu hooks [xdp]
  link nic0 -- cpu0 : pcie ordered
  link nic0 -- cpu1 : pcie ordered
}
space host0 on cpu0 size 64 GiB
region pkt0 in host0 at 0x1000_0000 size 4 KiB owner cpu0 init
region pkt1 in host0 at 0x1000_1000 size 4 KiB owner cpu1 init
map pkts: array<u32, u64>[1] class linearizable merge sum

flow count {
  edge q0: read pkt0 by cpu0.xdp map_read pkts[0] update pkts[0] = 1
  edge q1: read pkt1 by cpu1.xdp map_read pkts[0] update pkts[0] = 1
  edge dump: read pkt0 by cpu0.user after q0, q1 map_read pkts[0]
}
