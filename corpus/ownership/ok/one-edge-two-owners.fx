# Fixed twin of fail/one-edge-two-owners.fx: the GPU hands the buffer to the NIC, and the NIC,
# once it owns it, hands it on to the DPU with a later edge. One new owner per edge.
policy "one-edge-two-owners"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nic0: nic hooks [rx, tx, dma_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- nic0 : pcie ordered
  link gpu0 -- dpu0 : pcie ordered
  link nic0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region stage in hbm0 at 0x6000_0000 size 1 MiB owner gpu0 dtype bf16 init

flow ship {
  edge give: read stage by gpu0.copy_done handoff stage: gpu0 -> nic0
  edge pass_on: read stage by nic0.tx after give handoff stage: nic0 -> dpu0
  final owner stage = dpu0
}
