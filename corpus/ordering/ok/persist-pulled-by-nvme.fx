# GPUDirect Storage writes a KV checkpoint with an NVMe write command: the GPU writes the
# submission queue entry (and leases the block to the controller), and the controller's DMA
# engine *pulls* the bytes from GPU memory into its namespace. The data crosses the posted PCIe
# link as completions of the controller's read requests, and the controller writes them into its
# own media: no posted write of the checkpoint is in flight when `pull` finishes, so no flush is
# needed (specs/obligations.md section 1, posted rule: a pull writes only its driver's memory).
# The same checkpoint pushed by the GPU into the controller's persistent memory region is
# ordering/fail/persist-pushed-to-nvme-pmr.fx.
policy "persist-pulled-by-nvme"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nvme0: nvme hooks [sq_doorbell, dma_done, completion]
  link up0 = gpu0 -- nvme0 : pcie posted
}
space hbm0 on gpu0 size 80 GiB
space ns1 on nvme0 size 64 GiB persistent
region kv in hbm0 at 0x1000_0000 size 2 MiB owner gpu0 dtype bf16 init
region sqe in hbm0 at 0x2000_0000 size 64 B owner gpu0 dtype uint8
region ckpt in ns1 at 0x0 size 2 MiB owner nvme0 dtype bf16

flow save {
  edge submit: write sqe by gpu0.launch lease kv to nvme0
  edge pull: move kv -> ckpt by nvme0.dma_done after submit transform persist
}
