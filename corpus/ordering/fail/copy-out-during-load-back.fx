# A KV block that was swapped out is being loaded back from host memory into its GPU slot, while
# the prefix cache copies that same slot out to a peer buffer. The copy-out is on another stream
# and not ordered after the load, so it can ship a block that is only partly loaded (the
# load-back writes what the copy-out reads: a read-write race). For the same reason the copy-out
# may read slot bytes the load-back has not written yet (FX-INIT-001).
policy "copy-out-during-load-back"

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
  edge copy_out: move kv_slot -> kv_share by gpu0.copy_done stream d2d  # expect: FX-ORD-002, FX-INIT-001
  # ^ data race (write-read) on `kv_slot`: `load_back` and `copy_out` may overlap in time
  # ^ `copy_out` reads byte 0x20000000 of `kv_slot`, bf16 element 0, which no edge writes before it
}
