# Two layers offload their KV blocks in the same step, and a bookkeeping bug hands both the same
# host block. The two copies run on two copy streams with no order between them, so the host block
# ends up holding a mix of both layers (write-write race). Every in-flight offload needs its own
# destination block, or the second copy must wait for the first to be consumed.
policy "double-offload-same-host-block"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 16 GiB
region kv[l in 0..2] in hbm0 at 0x2000_0000 + l * 4 MiB size 4 MiB owner gpu0 dtype bf16 init
region host_blk[b in 0..2] in host0 at 0x1_4000_0000 + b * 4 MiB size 4 MiB owner gpu0 dtype bf16

flow step {
  edge off0: move kv[0] -> host_blk[1] by gpu0.copy_done stream copy0
  edge off1: move kv[1] -> host_blk[1] by gpu0.copy_done stream copy1  # expect: FX-ORD-002
  # ^ data race (write-write) on `host_blk[1]`: `off0` and `off1` may overlap in time
}
