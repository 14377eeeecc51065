# Incident (disaggregated prefill): the prefill side frees a finished request's KV blocks when it
# has handed their descriptors to the decode side, not when the decode side's RDMA reads of them
# are done. In a pull-style transfer the decode instance reads the prefill instance's blocks, and
# the next prefill request is given the same blocks and overwrites them while they are still
# being pulled.
# Fix: free the blocks on the decode side's "transfer done" notification, after its reads.
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
    edge pull[b]: move blk[b] -> kv_d[b] by gpu_d.copy_done after attn0[b]  # expect: FX-OWN-001, FX-OWN-004, FX-INIT-001
    # ^ `pull[0]` reads byte 0x40000000 of `blk[0]`, bf16 element 0, which no edge writes in its allocation: `attn0[0]` wrote it before `take1[0]` allocated it again
    # ^ `pull[0]` reads `blk[0]` from `gpu_d`, which neither owns nor leases it then
    # ^ `pull[0]` may use `blk[0]` while `free0[0]` releases it
    edge free0[b]: release blk[b] return_pool by gpu_p.free after attn0[b]
    edge take1[b]: alloc blk[b] to gpu_p by gpu_p.alloc after free0[b]
    edge attn1[b]: write blk[b] by gpu_p.launch after take1[b]  # expect: FX-ORD-002
    # ^ data race (read-write) on `blk[0]`: `pull[0]` and `attn1[0]` may overlap in time
  }
}
