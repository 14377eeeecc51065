# Host A publishes a record in non-coherent CXL shared memory (stores, then a write-back) and rings
# host B. Host B's NIC reaches the memory only through host B's root port, so its DMA read of the
# record is served from host B's cache when a line is there. Host B read the record before the
# update and never invalidates it: the NIC may send the stale line. The invalidate must be issued
# by host B itself, on an edge after the doorbell is seen and before the send (`seen`), since the
# NIC cannot drop host B's lines. Fixed twin: ok/nic-behind-host-sends-fresh-line.fx.
policy "nic-behind-host-sends-stale-line"

fabric {
  device cpu0: cpu hooks [run]
  device cpu1: cpu hooks [run]
  device nic1: nic hooks [tx]
  device mhd0: cxl_mem hooks [near_mem]
  link cpu0 -- mhd0 : cxl ordered
  link cpu1 -- mhd0 : cxl ordered
  link cpu1 -- nic1 : pcie ordered
}
space shm on mhd0 base 0x40_0000_0000 size 1 GiB noncoherent
space nicmem on nic1 size 16 MiB
region rec in shm at 0x40_0000_0000 size 4 KiB owner cpu0 init
region bell in shm at 0x40_0000_1000 size 64 owner cpu0
region wire in nicmem at 0x0 size 4 KiB owner nic1

flow publish {
  edge old: read rec by cpu1.run after grant0
  edge grant0: write bell by cpu0.run lease rec to cpu1 writeback bell
  edge upd: write rec by cpu0.run after old writeback rec lease rec to nic1
  edge ring: write bell by cpu0.run after upd writeback bell lease bell to cpu1
  edge seen: read bell by cpu1.run after ring invalidate bell
  edge send: move rec -> wire by nic1.tx after seen  # expect: FX-ORD-005
  # ^ `send` on `nic1` (through `cpu1`'s cache) reads bytes of non-coherent `shm` that `upd` wrote on `cpu0`, but not after `cpu1` invalidates them after the write-back
}
