# Incident (RDMA): a GPU kernel consumes a GPUDirect RDMA receive as soon as the completion
# arrives, without a flush. The NIC writes the message straight into GPU memory with posted PCIe
# writes, and the completion can overtake them, so the kernel can read stale bytes. Collective
# libraries issue a flush (a read through the NIC that forces the posted writes to land) before
# consuming GPU-direct receives.
# Fix: flush the NIC-GPU link after the receive and consume only after the flush.
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
  edge consume: move rbuf -> act by gpu0.launch after land  # expect: FX-ORD-003
  # ^ `consume` reads bytes that `land` wrote over posted link `up0` with no flush in between
}
