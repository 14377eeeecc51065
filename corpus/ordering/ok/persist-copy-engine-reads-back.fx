# The fix of ordering/fail/persist-copy-engine-no-readback.fx, with the descriptor's
# "Destination Readback" flag: after the copy, the engine itself reads the end of the record
# back, and only then writes the completion record. The copy stays inside `cpu0`'s memory, so its
# writes cross only the one link between the engine and the host (`iosf`), and the read request
# follows them over that link and cannot pass them (PCIe Base Specification, section 2.4.1): when
# it completes, the record is in the persistence domain.
policy "persist-copy-engine-reads-back"

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
  edge copy: move src -> dst by dsa0.work after submit transform persist
  edge readback: read dst[2 MiB - 64, +64] by dsa0.work after copy
  edge cr: write crec by dsa0.done after readback notifies copy lease crec to cpu0
  edge poll: read crec by cpu0.run after cr
}
