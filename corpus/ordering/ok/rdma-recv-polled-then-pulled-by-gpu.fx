# A two-sided RDMA receive: the NIC lands a prompt's token block in a posted host buffer, then
# writes the completion entry into the host's completion queue. The host polls the queue (it
# reads the entry, after `cqe`), and only then does the GPU's copy engine pull the block into
# GPU memory. The entry's arrival, which the poll saw, brings the block before it (one path from
# the NIC to the host, posted writes in order: the producer/consumer model), so neither the
# poll's read of the entry nor the GPU's read of the block needs a flush of `pcie0`. The GPU
# reads host memory after the host saw the entry, which is all it needs: it does not wait for
# the entry itself. Reading the block straight `after cqe` from the GPU would not be proved (the
# GPU may learn of the entry some other way: only the host's own poll saw it arrive).
policy "rdma-recv-polled-then-pulled-by-gpu"

fabric {
  device cpu0: cpu hooks [poll]
  device nic0: nic hooks [rx, tx]
  device gpu0: gpu hooks [launch, copy_done]
  link pcie0 = cpu0 -- nic0 : pcie posted
  link pcie1 = cpu0 -- gpu0 : pcie ordered
}
space host0 on cpu0 size 64 GiB
space hbm0 on gpu0 size 80 GiB
region rxbuf in host0 at 0x1000_0000 size 64 KiB owner nic0 dtype int32
region cq in host0 at 0x2000_0000 size 4 KiB owner nic0
region tokens in hbm0 at 0x4000_0000 size 64 KiB owner gpu0 dtype int32

flow receive {
  edge land: write rxbuf by nic0.rx lease rxbuf to gpu0
  edge cqe: write cq[0, +64] by nic0.tx after land notifies land lease cq to cpu0
  edge poll: read cq[0, +64] by cpu0.poll after cqe
  edge pull: move rxbuf -> tokens by gpu0.copy_done after poll
}
