# Fixed twin of fail/pd-request-aborted-mid-transfer.fx: the blocks of the aborted request go back
# to the pool only after `stop`, the cancel of its pulls, has completed. From then on the
# cancelled reads touch no byte, so the next request may take the blocks and write them, although
# the pulls themselves are ordered before none of it.
policy "pd-request-aborted-mid-transfer"

fabric {
  device gpu_p: gpu hooks [launch]
  device gpu_d: gpu hooks [launch, copy_done, alloc, free]
  device nic_p: nic hooks [tx]
  device nic_d: nic hooks [rx]
  link gpu_p -- nic_p : pcie ordered
  link nic_p -- nic_d : rdma ordered
  link nic_d -- gpu_d : pcie ordered
}
space hbm_p on gpu_p size 80 GiB
space hbm_d on gpu_d size 80 GiB
region blk_p[b in 0..2] in hbm_p at 0x4000_0000 + b * 1 MiB size 1 MiB owner gpu_p dtype bf16
region kv_d[b in 0..2] in hbm_d at 0x4000_0000 + b * 1 MiB size 1 MiB owner gpu_d dtype bf16 pooled
region req in hbm_d at 0x1000 size 64 owner gpu_d

flow disagg {
  for b in 0..2 {
    edge attn[b]: write blk_p[b] by gpu_p.launch lease blk_p[b] to gpu_d
    edge take0[b]: alloc kv_d[b] to gpu_d by gpu_d.alloc
    edge pull[b]: move blk_p[b] -> kv_d[b] by gpu_d.copy_done after attn[b], take0[b]
  }
  edge aborted: write req by gpu_d.launch after take0[*]
  edge stop: cancel pull[*] by gpu_d.copy_done after aborted
  for b in 0..2 {
    edge free0[b]: release kv_d[b] return_pool by gpu_d.free after stop
    edge take1[b]: alloc kv_d[b] to gpu_d by gpu_d.alloc after free0[b]
    edge fill1[b]: write kv_d[b] by gpu_d.launch after take1[b]
  }
}
