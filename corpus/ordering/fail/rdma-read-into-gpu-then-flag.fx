# The GPUDirect twin of ordering/ok/rdma-read-into-host-then-cqe.fx: the NIC lands the KV block
# in GPU memory and then sets a ready flag there, and a kernel that spins on the flag reads the
# block. PCIe keeps the two posted writes in order on the link, but GPU memory is not host memory:
# CUDA reports per device whether a GPU consumes third-party writes in order
# (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, NONE on many systems), so the flag does not
# bring the block. Fix: a flush of `pcie0` by the GPU after the flag and before the read
# (cuFlushGPUDirectRDMAWrites, or a stream wait with CU_STREAM_WAIT_VALUE_FLUSH).
policy "rdma-read-into-gpu-then-flag"

fabric {
  device gpu0: gpu hooks [launch]
  device nic0: nic hooks [rx, tx]
  device nic1: nic hooks [rx, tx]
  device cpu1: cpu hooks [poll]
  link pcie0 = gpu0 -- nic0 : pcie posted
  link wire = nic0 -- nic1 : rdma ordered
  link pcie1 = nic1 -- cpu1 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host1 on cpu1 size 64 GiB
region kv_remote in host1 at 0x1000_0000 size 2 MiB owner nic0 dtype bf16 init
region kv in hbm0 at 0x1000_0000 size 2 MiB owner nic0 dtype bf16
region ready in hbm0 at 0x2000_0000 size 4 KiB owner nic0

flow fetch_block {
  edge fetch: move kv_remote -> kv by nic0.rx lease kv to gpu0
  edge flag: write ready[0, +8] by nic0.tx after fetch notifies fetch
  edge attn: read kv by gpu0.launch after flag  # expect: FX-ORD-003
  # ^ `attn` reads bytes that `fetch` wrote over posted link `pcie0` with no flush in between
}
