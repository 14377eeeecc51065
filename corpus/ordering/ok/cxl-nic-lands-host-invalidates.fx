# The NIC receive of the failing twin, with host B invalidating the slot as its read starts (after
# the write has landed): B then fetches the new message from memory.
policy "cxl-nic-lands-host-invalidates"

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
  edge take: read slot by cpuB.run after land invalidate slot
}
