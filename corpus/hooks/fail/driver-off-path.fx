# A GPU-to-expander KV spill is driven from the NIC's doorbell hook. The bytes go from gpu0 to
# cxl0 over their CXL link, but the NIC hangs off the host and lies on no path between them, so
# it cannot drive the transfer. The driving device must sit on a path from source to destination.
# (Both regions name nic0 as owner, so that the path is the only problem left.)
policy "driver-off-path"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  device cpu0: cpu hooks [launch]
  device nic0: nic hooks [rx, tx, doorbell]
  link gpu0 -- cxl0 : cxl ordered
  link cpu0 -- nic0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 2 MiB owner nic0 dtype bf16 init
region pool in hdm0 at 0x80_2000_0000 size 2 MiB owner nic0 dtype bf16

flow spill {
  edge spill: move kv -> pool by nic0.doorbell  # expect: FX-HOOK-001
  # ^ `spill` is driven by `nic0`, which has no fabric path between `gpu0` and `cxl0`
}
