# Host `cpu1` stores a record into host `cpu0`'s memory through a PCIe non-transparent bridge,
# whose window is posted. `cpu0` then reads a word of `cpu1`'s memory through the bridge and takes
# the record as arrived: the way a device's register read pushes its DMA (ok/posted-status-read-
# before-host-read.fx). That rule is about a device's DMA engine. A host's stores may still sit in
# its write-combining buffers, which another agent's read does not drain (only the storing core's
# fence does: Intel SDM, volume 3A, section 11.3.1), so the record may not be there yet. Flush the
# bridge's link after the stores.
policy "posted-host-read-after-host-stores"

fabric {
  device cpu0: cpu hooks [run]
  device cpu1: cpu hooks [run]
  device ntb0: pcie_switch
  link a = cpu1 -- ntb0 : pcie posted
  link b = ntb0 -- cpu0 : pcie posted
}
space dram0 on cpu0 size 64 GiB
space dram1 on cpu1 size 64 GiB
region src in dram1 at 0x1000 size 4 KiB owner cpu1 init
region flag in dram1 at 0x0 size 4 owner cpu0 init
region dst in dram0 at 0x1000_0000 size 4 KiB owner cpu1

flow x {
  edge put: move src -> dst by cpu1.run lease dst to cpu0
  edge probe: read flag by cpu0.run after put
  edge use: read dst by cpu0.run after probe  # expect: FX-ORD-003
  # ^ `use` reads bytes that `put` wrote over posted link `a` with no flush in between
}
