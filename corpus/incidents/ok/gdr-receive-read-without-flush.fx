# Fixed twin of fail/gdr-receive-read-without-flush.fx: after the receive lands, the GPU side flushes
# the posted link, and the kernel consumes the buffer after the flush.
policy "gdr-receive-read-without-flush"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nic0: nic hooks [rx, dma_done]
  link up0 = nic0 -- gpu0 : pcie posted
}
space hbm0 on gpu0 size 80 GiB
region rbuf in hbm0 at 0x4000_0000 size 4 MiB owner nic0 dtype bf16
region act in hbm0 at 0x5000_0000 size 4 MiB owner gpu0 dtype bf16

flow recv {
  edge land: write rbuf by nic0.rx handoff rbuf: nic0 -> gpu0
  edge gdr_flush: flush up0 by gpu0.copy_done after land
  edge consume: move rbuf -> act by gpu0.launch after gdr_flush
}
