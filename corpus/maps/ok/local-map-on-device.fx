# Fixed twin of fail/local-map-off-device.fx: the GPU-local statistics map is touched only by gpu0
# hooks, and the DPU counts its sent bytes in its own `local(dpu0)` map.
policy "local-map-on-device"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space dram0 on dpu0 base 0x10_0000_0000 size 16 GiB
region kv in hbm0 at 0x2000_0000 size 1 MiB owner gpu0 dtype bf16
region txq in dram0 at 0x10_0000_0000 size 1 MiB owner dpu0 dtype bf16
map gpu_stats: array<u32, u64>[4] class local(gpu0) merge sum
map dpu_stats: array<u32, u64>[4] class local(dpu0) merge sum

flow send {
  edge fill: write kv by gpu0.launch update gpu_stats[0] = 1 lease kv to dpu0
  edge xmit: move kv -> txq by dpu0.dma_done after fill update dpu_stats[1] = 1 MiB
}
