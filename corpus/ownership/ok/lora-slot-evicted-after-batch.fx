# Four LoRA adapter slots recycled round-robin over twelve requests: request r loads its
# adapter into slot r % 4 once the slot's previous tenant, request r - 4, has evicted it. Each
# request evicts its adapter only after the batch that reads it, so the next tenant's adapter
# lands in the slot after the last read of the previous one.
policy "lora-slot-evicted-after-batch"

fabric {
  device cpu0: cpu hooks [run]
  device gpu0: gpu hooks [launch, copy_done, alloc, free]
  link cpu0 -- gpu0 : pcie ordered
}
space host0 on cpu0 size 64 GiB
space hbm0 on gpu0 size 80 GiB
region lora[a in 0..12] in host0 at 0x1000_0000 + a * 32 MiB size 32 MiB owner gpu0 dtype bf16 init
region slot[s in 0..4] in hbm0 at 0x4000_0000 + s * 32 MiB size 32 MiB owner gpu0 dtype bf16 pooled

flow serve {
  for r in 0..12 {
    if r < 4 {
      edge take[r]: alloc slot[r % 4] to gpu0 by gpu0.alloc
    } else {
      edge take[r]: alloc slot[r % 4] to gpu0 by gpu0.alloc after evict[r - 4]
    }
    edge load[r]: move lora[r] -> slot[r % 4] by gpu0.copy_done after take[r]
    edge batch[r]: read slot[r % 4] by gpu0.launch after load[r]
    edge evict[r]: release slot[r % 4] evict by gpu0.free after batch[r]
  }
}
