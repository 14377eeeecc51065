# Fixed twin of fail/double-offload-same-host-block.fx: each layer's KV block is offloaded into
# its own host block, so the two copies touch disjoint bytes and may overlap in time freely.
policy "offload-distinct-host-blocks"

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
  edge off0: move kv[0] -> host_blk[0] by gpu0.copy_done stream copy0
  edge off1: move kv[1] -> host_blk[1] by gpu0.copy_done stream copy1
}
