# Fixed twin of fail/copy-out-during-load-back.fx: the copy-out of the KV slot waits until the
# load-back from host memory has completed (`after load_back`), so it always ships whole blocks.
policy "copy-out-after-load-back"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 16 GiB
region kv_slot in hbm0 at 0x2000_0000 size 1 MiB owner gpu0 dtype bf16
region kv_share in hbm0 at 0x2800_0000 size 1 MiB owner gpu0 dtype bf16
region host_blk in host0 at 0x1_4000_0000 size 1 MiB owner gpu0 dtype bf16 init

flow swap_in {
  edge load_back: move host_blk -> kv_slot by gpu0.copy_done stream h2d
  edge copy_out: move kv_slot -> kv_share by gpu0.copy_done stream d2d after load_back
}
