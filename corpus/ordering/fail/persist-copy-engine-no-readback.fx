# A copy engine beside the host (Intel DSA, an integrated PCIe endpoint) moves a record from DRAM
# into the same host's persistent memory, and software takes the completion record as durability.
# The engine's writes into persistent memory are posted: the completion only says they were
# issued, and a power loss may still lose them (the DSA architecture specification offers the
# descriptor flag "Destination Readback" for this). The copy has both ends on `cpu0`: its engine
# reads the record in and writes it out over `iosf`. Fix:
# ordering/ok/persist-copy-engine-reads-back.fx.
policy "persist-copy-engine-no-readback"

fabric {
  device cpu0: cpu hooks [run]
  device dsa0: dpu hooks [work, done]
  link iosf = dsa0 -- cpu0 : pcie posted
}
space dram0 on cpu0 base 0x1_0000_0000 size 64 GiB
space pmem0 on cpu0 base 0x40_0000_0000 size 256 GiB persistent
region src in dram0 at 0x1_0000_0000 size 2 MiB owner cpu0 init
region crec in dram0 at 0x1_1000_0000 size 64 owner dsa0
region dst in pmem0 at 0x40_0000_0000 size 2 MiB owner dsa0

flow save {
  edge submit: read src by cpu0.run lease src to dsa0
  edge copy: move src -> dst by dsa0.work after submit transform persist  # expect: FX-ORD-003
  # ^ `copy` persists bytes over posted link `iosf`, and no flush of `iosf` follows it
  edge cr: write crec by dsa0.done after copy notifies copy lease crec to cpu0
  edge poll: read crec by cpu0.run after cr
}
