# Two views of one send window overlap without one lying inside the other: `scratch` starts in
# the middle of `sendwin` and runs past its end. The GPU hands `sendwin` to the NIC and then
# writes the window's second half. Those bytes are in both views; `scratch` is not inside
# `sendwin`, so the handoff did not move it and cannot speak for `sendwin`'s bytes: both views
# govern, and the GPU no longer owns `sendwin`.
policy "write-overlapping-view-after-handoff"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nic0: nic hooks [tx]
  link gpu0 -- nic0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region sendwin in hbm0 at 0x4000_0000 size 2 MiB owner gpu0 init
region scratch in hbm0 at 0x4010_0000 size 1536 KiB owner gpu0
alias_set views = [sendwin, scratch]

flow f {
  edge post: read sendwin[0, +4 KiB] by gpu0.copy_done handoff sendwin: gpu0 -> nic0
  edge tmp: write sendwin[1 MiB, +1 MiB] by gpu0.launch after post  # expect: FX-OWN-001
  # ^ `tmp` writes `sendwin` from `gpu0`, which neither owns nor leases it then
}
