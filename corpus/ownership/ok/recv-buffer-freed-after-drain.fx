# The fix of ownership/fail/recv-buffer-freed-without-drain.fx, as ib_drain_qp does it: the queue
# pair goes to the error state, which cancels the posted receive (`drain` cancels `land`), and the
# flushed completion hands the buffer back to the host, which frees it only then. A receive that
# had not started when the cancel completed touches no byte, so it needs no owner; one that had
# started ends before the buffer goes back.
policy "recv-buffer-freed-after-drain"

fabric {
  device cpu0: cpu hooks [launch, free]
  device nic0: nic hooks [rx]
  link cpu0 -- nic0 : pcie ordered
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region rbuf in host0 at 0x1_0000_0000 size 64 KiB owner cpu0
region ev in host0 at 0x1_1000_0000 size 4 KiB owner cpu0
region cq in host0 at 0x1_2000_0000 size 64 owner nic0

flow teardown {
  edge post: write ev[0, +64] by cpu0.launch handoff rbuf: cpu0 -> nic0
  edge land: write rbuf by nic0.rx after post
  edge disconnect: write ev[64, +64] by cpu0.launch after post
  edge drain: cancel land by nic0.rx after disconnect  # the QP to error
  edge flushed: write cq[0, +64] by nic0.rx after drain handoff rbuf: nic0 -> cpu0  # the flushed completion
  edge free: release rbuf free by cpu0.free after flushed
}
