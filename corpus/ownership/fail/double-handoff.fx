# A pinned staging buffer is handed to the NIC for an RDMA send, and later the GPU hands the same
# buffer to the DPU for compression, but the NIC never gave it back. After the first handoff the
# GPU no longer owns the buffer, so the second handoff is made by a non-owner (a double handoff).
policy "double-handoff"

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
  edge to_dpu: read stage by gpu0.copy_done after to_nic handoff stage: gpu0 -> dpu0  # expect: FX-OWN-003
  # ^ `to_dpu` hands `stage` off from `gpu0`, which may not own it then
}
