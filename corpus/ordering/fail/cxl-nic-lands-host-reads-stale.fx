# A NIC attached to a CXL multi-headed memory device DMA-writes received messages into a slot of
# the shared segment; host B, which read the previous message from the slot (its cache may still
# hold the line), reads the new one after the completion without invalidating. The NIC writes the
# memory itself, but B's cache is not snooped by it: B needs its own invalidate after the write
# has landed and before the read.
policy "cxl-nic-lands-host-reads-stale"

fabric {
  device nicA: nic hooks [rx]
  device cpuB: cpu hooks [run]
  device mhd0: cxl_mem hooks [near_mem]
  link nicA -- mhd0 : cxl ordered
  link cpuB -- mhd0 : cxl ordered
}
space shm0 on mhd0 base 0x40_0000_0000 size 1 GiB noncoherent
space wire on nicA size 1 GiB init
region msg in wire at 0x0 size 4 KiB owner nicA
region slot in shm0 at 0x40_0000_0000 size 4 KiB owner nicA

flow rx {
  edge land: move msg -> slot by nicA.rx lease slot to cpuB
  edge take: read slot by cpuB.run after land  # expect: FX-ORD-005
  # ^ `take` on `cpuB` reads bytes of non-coherent `shm0` that `land` wrote on `nicA`, straight to memory, but not after `cpuB` invalidates them after the write lands
}
