# Fixed twin of fail/write-overlapping-view-after-handoff.fx: the GPU fills the window's second
# half before it hands the window to the NIC, while it still owns both views.
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
  edge tmp: write sendwin[1 MiB, +1 MiB] by gpu0.launch
  edge post: read sendwin[0, +4 KiB] by gpu0.copy_done after tmp handoff sendwin: gpu0 -> nic0
}
