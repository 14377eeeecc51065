# A selectively signalled receive queue: the NIC writes a 4 MiB message into GPU memory, and that
# write also reports an earlier receive on the queue (`notifies land0`), so the GPU kernel that
# waits for it (`after land`) polls a word of the message itself. An entry's own bytes count as
# seen by the edge that waited for it only when they fit one posted request, whole or not at all:
# one aligned 64-byte block in host memory, one aligned 8-byte word elsewhere
# (specs/obligations.md section 1, completion entries). A 4 MiB buffer is thousands of posted
# writes, and GPU memory may see them out of order (CUDA's
# CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING), so the word polled says nothing of the
# rest: flush the NIC's link before the kernel reads the message, as for
# incidents/fail/gdr-receive-read-without-flush.fx. Fixed twin: ok/polled-flag-word-in-gpu-memory.fx.
policy "polled-buffer-that-notifies"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nic0: nic hooks [rx, dma_done]
  link up0 = nic0 -- gpu0 : pcie posted
}
space hbm0 on gpu0 size 80 GiB
region rbuf0 in hbm0 at 0x3000_0000 size 4 MiB owner nic0 dtype bf16
region rbuf in hbm0 at 0x4000_0000 size 4 MiB owner nic0 dtype bf16
region act in hbm0 at 0x5000_0000 size 4 MiB owner gpu0 dtype bf16

flow recv {
  edge land0: write rbuf0 by nic0.rx stream rq
  edge land: write rbuf by nic0.rx stream rq notifies land0 handoff rbuf: nic0 -> gpu0
  edge consume: move rbuf -> act by gpu0.launch after land  # expect: FX-ORD-003
  # ^ `consume` reads bytes that `land` wrote over posted link `up0` with no flush in between
}
