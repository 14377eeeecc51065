# A KV block pool of two slots serves three requests, one after another: request q takes slot
# q % 2. The scheduler hands slot 0 to request 2 as soon as request 2 arrives, without waiting
# for request 0 to free it, so request 2's KV may overwrite request 0's while request 0's
# attention still reads it. The allocation of a pooled block must be happens-after the release
# of its previous allocation: `take[q, l]` waits for `free[q - 2, l]`.
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
        edge take[q, l]: alloc kv[q % 2, l] to gpu0 by gpu0.alloc  # expect: FX-OWN-006
        # ^ `take[2][0]` may allocate `kv[0][0]` before `free[0][0]` releases it
      } else {
        edge take[q, l]: alloc kv[q % 2, l] to gpu0 by gpu0.alloc
      }
      if q >= 1 {
        edge fill[q, l]: write kv[q % 2, l] by gpu0.launch after take[q, l], attn[q - 1, 1]  # expect: FX-ORD-002, FX-OWN-004
        # ^ data race (write-write) on `kv[0][0]`: `fill[0][0]` and `fill[2][0]` may overlap in time
        # ^ data race (read-write) on `kv[0][0]`: `attn[0][0]` and `fill[2][0]` may overlap in time
        # ^ `fill[2][0]` may use `kv[0][0]` while `free[0][0]` releases it
      } else {
        edge fill[q, l]: write kv[q % 2, l] by gpu0.launch after take[q, l]  # expect: FX-OWN-004
        # ^ `fill[0][0]` may use `kv[0][0]` while `take[2][0]` allocates it
      }
      edge attn[q, l]: read kv[q % 2, l] by gpu0.launch after fill[q, l]  # expect: FX-ORD-002, FX-INIT-001, FX-OWN-004
      # ^ data race (write-read) on `kv[0][0]`: `fill[0][0]` and `attn[2][0]` may overlap in time
      # ^ `attn[0][0]` reads byte 0x40000000 of `kv[0][0]`, bf16 element 0, which no edge writes in its allocation: `fill[0][0]` wrote it before `take[2][0]` allocated it again
      # ^ `attn[0][0]` may use `kv[0][0]` while `take[2][0]` allocates it
      edge free[q, l]: release kv[q % 2, l] return_pool by gpu0.free after attn[q, l]
    }
  }
}
