# An RDMA target tears a queue pair down on disconnect and frees the receive buffer it had posted
# to it, without first draining the queue pair: a receive still posted may be filled by the NIC
# after the free, a DMA into freed memory (the Linux RDMA ULPs that call ib_drain_qp before
# freeing their receive buffers fix this). Posting the receive hands the buffer to the NIC; the
# free waits for nothing that gives it back. Fixed twin: ok/recv-buffer-freed-after-drain.fx.
policy "recv-buffer-freed-without-drain"

fabric {
  device cpu0: cpu hooks [launch, free]
  device nic0: nic hooks [rx]
  link cpu0 -- nic0 : pcie ordered
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region rbuf in host0 at 0x1_0000_0000 size 64 KiB owner cpu0
region ev in host0 at 0x1_1000_0000 size 4 KiB owner cpu0

flow teardown {
  edge post: write ev[0, +64] by cpu0.launch handoff rbuf: cpu0 -> nic0  # post the receive
  edge land: write rbuf by nic0.rx after post  # a late message lands
  edge disconnect: write ev[64, +64] by cpu0.launch after post  # the disconnect event
  edge free: release rbuf free by cpu0.free after disconnect  # expect: FX-OWN-001, FX-OWN-004
  # ^ `free` releases `rbuf` from `cpu0`, which does not own it then
  # ^ `free` releases `rbuf` (free) while `land` may still use it
}
