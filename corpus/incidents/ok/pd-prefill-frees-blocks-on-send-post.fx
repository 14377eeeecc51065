# Fixed twin of fail/pd-prefill-frees-blocks-on-send-post.fx: each block is freed after the decode
# side's pull of it has finished (`free0[b]` is `after pull[b]`), then given to the next request.
policy "pd-prefill-frees-blocks-on-send-post"

fabric {
  device gpu_p: gpu hooks [launch, alloc, free]
  device gpu_d: gpu hooks [launch, copy_done]
  device nic_p: nic hooks [tx]
  device nic_d: nic hooks [rx]
  link gpu_p -- nic_p : pcie ordered
  link nic_p -- nic_d : rdma ordered
  link nic_d -- gpu_d : pcie ordered
}
space hbm_p on gpu_p size 80 GiB
space hbm_d on gpu_d size 80 GiB
region blk[b in 0..2] in hbm_p at 0x4000_0000 + b * 1 MiB size 1 MiB owner gpu_p dtype bf16 pooled
region kv_d[b in 0..2] in hbm_d at 0x4000_0000 + b * 1 MiB size 1 MiB owner gpu_d dtype bf16

flow disagg {
  for b in 0..2 {
    edge take0[b]: alloc blk[b] to gpu_p by gpu_p.alloc
    edge attn0[b]: write blk[b] by gpu_p.launch after take0[b] lease blk[b] to gpu_d
    edge pull[b]: move blk[b] -> kv_d[b] by gpu_d.copy_done after attn0[b]
    edge free0[b]: release blk[b] return_pool by gpu_p.free after pull[b]
    edge take1[b]: alloc blk[b] to gpu_p by gpu_p.alloc after free0[b]
    edge attn1[b]: write blk[b] by gpu_p.launch after take1[b]
  }
}
