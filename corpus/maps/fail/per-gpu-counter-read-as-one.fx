# Each GPU counts the KV bytes it has sent in its own slot of a `per_device` map (like bpftime's
# per-GPU-thread array). The host then reads the counter with a plain `map_read`, as if it were one
# value: it sees one slot (or none), not the total. A per-device map must be read with an
# `aggregate` that folds every slot, taken after every writer.
policy "per-gpu-counter-read-as-one"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device gpu1: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [poll]
  link gpu0 -- cpu0 : pcie ordered
  link gpu1 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space hbm1 on gpu1 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region kv0 in hbm0 at 0x2000_0000 size 4 MiB owner gpu0 dtype bf16
region kv1 in hbm1 at 0x2000_0000 size 4 MiB owner gpu1 dtype bf16
region stats in host0 at 0x1_0000_0000 size 4 KiB owner cpu0
map kv_sent: array<u32, u64>[8] class per_device merge sum

flow step {
  edge send0: write kv0 by gpu0.launch update kv_sent[0] = 4 MiB
  edge send1: write kv1 by gpu1.launch update kv_sent[0] = 4 MiB
  edge report: write stats by cpu0.poll after send0, send1 map_read kv_sent[0]  # expect: FX-MAP-004
  # ^ `report` reads per-device map `kv_sent[0]` as one value, but `gpu0`, `gpu1` write their own slots
}
