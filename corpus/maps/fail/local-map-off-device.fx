# A GPU-side statistics map is declared `local(gpu0)`: it lives only in gpu0's memory. A DPU hook
# then updates it when a send completes, but the DPU cannot reach a map that exists on another
# device. Use a shared class, or move the access to a gpu0 hook.
policy "local-map-off-device"

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

flow send {
  edge fill: write kv by gpu0.launch update gpu_stats[0] = 1 lease kv to dpu0
  edge xmit: move kv -> txq by dpu0.dma_done after fill update gpu_stats[1] = 1 MiB  # expect: FX-MAP-001
  # ^ `xmit` on `dpu0` accesses `gpu_stats`, which is local to `gpu0`
}
