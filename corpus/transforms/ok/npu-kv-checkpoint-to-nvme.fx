# An NPU prefill checkpoints its KV cache to an NVMe namespace. The NVMe namespace is non-volatile,
# so its space is `persistent`, and `persist` may make the checkpoint durable there; the chain takes
# its checksum over exactly the bytes stored, uncompressed (4 MiB into the first half of the 8 MiB
# slot), so the read-back reads only bytes the save wrote. The NVMe controller moves the bytes
# itself, by peer-to-peer DMA through the PCIe switch, so the copy runs at its submission queue
# doorbell and it needs a lease on the KV block; the NPU frees the block only after the checkpoint
# and the completion that reads it back for verification.
policy "npu-kv-checkpoint-to-nvme"

fabric {
  device npu0: npu hooks [launch, exit, copy_done, fault]
  device sw0: pcie_switch
  device nvme0: nvme hooks [sq_doorbell, completion, dma_done]
  link npu0 -- sw0 : pcie ordered
  link sw0 -- nvme0 : pcie ordered
}
space hbm0 on npu0 size 64 GiB
space ns1 on nvme0 size 1 TiB persistent checksum crc32c  # namespace 1, byte-addressed (LBA * 4 KiB)
region kv in hbm0 at 0x0 size 4 MiB owner npu0 dtype bf16
region ckpt in ns1 at 0x4000_0000 size 8 MiB owner nvme0

flow checkpoint {
  edge prefill: write kv by npu0.launch lease kv to nvme0
  edge save: move kv -> ckpt by nvme0.sq_doorbell after prefill transform checksum(crc32c) |> persist
  edge verify: read ckpt[0, +4 MiB] by nvme0.completion after save
  edge done: release kv free by npu0.exit after save, verify
}
