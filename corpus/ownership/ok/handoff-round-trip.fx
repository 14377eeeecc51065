# Fixed twin of fail/double-handoff.fx: the NIC hands the staging buffer back to the GPU when its
# send has completed, and only then does the GPU hand it to the DPU. Each handoff is made by the
# owner of the moment, and the handoffs are ordered, so the final owner (dpu0) is unique.
policy "handoff-round-trip"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nic0: nic hooks [rx, tx, dma_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- nic0 : pcie ordered
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region stage in hbm0 at 0x6000_0000 size 1 MiB owner gpu0 dtype bf16 init

flow ship {
  edge to_nic: read stage by gpu0.copy_done handoff stage: gpu0 -> nic0
  edge sent: read stage by nic0.tx after to_nic handoff stage: nic0 -> gpu0
  edge to_dpu: read stage by gpu0.copy_done after sent handoff stage: gpu0 -> dpu0
  final owner stage = dpu0
}
