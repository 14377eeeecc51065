# An accelerator attached to the host over CXL pushes a result into host memory, then writes a
# completion flag there (`notifies push`); the host polls the flag, then reads the result. A
# completion entry brings the writes before it only over PCIe links, where posted requests do not
# pass posted requests on one path (PCIe Base Specification, section 2.4.1). A device writing host
# memory over CXL.cache has no order between writes to different addresses: it must wait until
# its writes are globally observed before it sets the flag. fxverify cites no ordering rule for a
# `cxl` link (vocab.ENTRY_KINDS), so the read needs a flush of the link after the push. Fixed by
# `edge fl: flush c2c by acc0.copy_done after push` and `after fl` on `done`.
policy "cqe-over-cxl-link"

fabric {
  device cpu0: cpu hooks [poll]
  device acc0: npu hooks [launch, copy_done]
  link c2c = acc0 -- cpu0 : cxl posted
}
space host0 on cpu0 size 64 GiB
space dev0 on acc0 size 16 GiB
region src in dev0 at 0x0 size 1 MiB owner acc0 init
region out in host0 at 0x1000_0000 size 1 MiB owner acc0
region flag in host0 at 0x2000_0000 size 64 owner acc0

flow f {
  edge push: move src -> out by acc0.copy_done lease out to cpu0
  edge done: write flag by acc0.launch after push notifies push lease flag to cpu0
  edge use: read out by cpu0.poll after done  # expect: FX-ORD-003
  # ^ `use` reads bytes that `push` wrote over posted link `c2c` with no flush in between
}
