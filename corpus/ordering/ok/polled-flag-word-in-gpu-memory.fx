# The NIC writes a 4 MiB message into GPU memory, then an 8-byte flag that reports it
# (`notifies land`); a GPU kernel spins on the flag (`after flag`) and reads the flag word it saw,
# then a flush of the NIC's link makes the message visible before the kernel consumes it. The
# flag's own bytes fit one aligned 8-byte word, which a device writes as one posted request, so
# the kernel that saw the flag saw all of it (specs/obligations.md section 1, completion entries);
# the message needs the flush (GPU memory may see the NIC's writes out of order). Failing twin:
# fail/polled-buffer-that-notifies.fx.
policy "polled-flag-word-in-gpu-memory"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nic0: nic hooks [rx, dma_done]
  link up0 = nic0 -- gpu0 : pcie posted
}
space hbm0 on gpu0 size 80 GiB
region rbuf in hbm0 at 0x4000_0000 size 4 MiB owner nic0 dtype bf16
region flag in hbm0 at 0x3000_0000 size 8 owner nic0
region act in hbm0 at 0x5000_0000 size 4 MiB owner gpu0 dtype bf16
region seen in hbm0 at 0x3000_1000 size 8 owner gpu0

flow recv {
  edge land: write rbuf by nic0.rx stream rq lease rbuf to gpu0
  edge flag: write flag by nic0.rx stream rq after land notifies land lease flag to gpu0
  edge spin: move flag -> seen by gpu0.launch after flag
  edge fl: flush up0 by nic0.dma_done after flag
  edge consume: move rbuf -> act by gpu0.launch after spin, fl
}
