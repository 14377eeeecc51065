# A KV block pool of two slots serves three requests, one after another: request q takes slot
# q % 2, and only once request q - 2, the slot's last holder, has freed it (`take[q, l]` after
# `free[q - 2, l]`). Each slot is allocated to one request at a time, and every read of it
# sees its own request's KV.
policy "pool-slot-handed-out-before-free"

fabric {
  device gpu0: gpu hooks [launch, alloc, free]
}
space hbm0 on gpu0 size 80 GiB
region kv[s in 0..2, l in 0..2] in hbm0 at 0x4000_0000 + (s * 2 + l) * 1 MiB size 1 MiB owner gpu0 dtype bf16 pooled
region act in hbm0 at 0x1000_0000 size 8 MiB owner gpu0 dtype bf16 init

flow prefill {
  for q in 0..3 {
    for l in 0..2 {
      if q >= 2 {
        edge take[q, l]: alloc kv[q % 2, l] to gpu0 by gpu0.alloc after free[q - 2, l]
      } else {
        edge take[q, l]: alloc kv[q % 2, l] to gpu0 by gpu0.alloc
      }
      if q >= 1 {
        edge fill[q, l]: write kv[q % 2, l] by gpu0.launch after take[q, l], attn[q - 1, 1]
      } else {
        edge fill[q, l]: write kv[q % 2, l] by gpu0.launch after take[q, l]
      }
      edge attn[q, l]: read kv[q % 2, l] by gpu0.launch after fill[q, l]
      edge free[q, l]: release kv[q % 2, l] return_pool by gpu0.free after attn[q, l]
    }
  }
}
