# Incident (checkpointing): to speed up checkpoints, shards are staged in the NVMe controller's
# memory buffer (CMB) and the step is reported durable once they are there. The controller
# memory buffer is not the namespace: it is volatile, so a power loss or controller reset loses
# a checkpoint that training already considers saved.
# Fix: persist into the namespace (a persistent space); the buffer may stage, never commit.
policy "ckpt-persisted-into-controller-memory"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nvme0: nvme hooks [sq_doorbell, completion, dma_done]
  link gpu0 -- nvme0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space cmb0 on nvme0 size 256 MiB
region params in hbm0 at 0x4000_0000 size 4 MiB owner gpu0 init
region shard in cmb0 at 0x0 size 4 MiB owner gpu0

flow checkpoint {
  edge save: move params -> shard by gpu0.copy_done transform checksum(crc32c) |> persist  # expect: FX-XF-003
  # ^ `save`: persist into `cmb0`, which is not declared `persistent`: its bytes do not survive a power loss or reboot
}
