# An XDP program counts packets in a shared BPF array map with `v = lookup(key); *v = *v + 1`:
# a load and a plain store, no atomic. The same program runs on two CPUs serving two RX queues,
# so both may load the same count and store it back plus one: one increment is lost. Ordering
# the two CPUs' programs would serialise packet processing; the fix is the atomic add
# (`__sync_fetch_and_add`), an `update` merging with `sum`. Fixed twin:
# ok/xdp-counter-atomic-add.fx.
policy "xdp-counter-load-and-store"

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
map pkts: array<u32, u64>[1] class linearizable

flow count {
  edge q0: read pkt0 by cpu0.xdp map_read pkts[0] map_write pkts[0] = 1
  edge q1: read pkt1 by cpu1.xdp map_read pkts[0] map_write pkts[0] = 1  # expect: FX-MAP-002
  # ^ `q0` and `q1` may write `pkts[0]` concurrently: one update is lost
  edge dump: read pkt0 by cpu0.user after q0, q1 map_read pkts[0]
}
