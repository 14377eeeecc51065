# A map the kernel cannot create: `max_entries` of a BPF map is a u32, so 2^32 entries do not fit.
# `fxverify check` proves the policy (a map's size changes no obligation); `fxverify lower` refuses
# it before compiling, at the map's declaration (FX-BPF-011), instead of a verifier rejection with
# an empty log. Fixed: corpus/maps/ok/per-gpu-counter-aggregated.fx (8 entries).
policy "map-entries-exceed-u32"

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
map kv_sent: array<u32, u64>[4294967296] class per_device merge sum  # expect: FX-BPF-011

flow step {
  edge send0: write kv0 by gpu0.launch update kv_sent[0] = 4 MiB
  edge send1: write kv1 by gpu1.launch update kv_sent[0] = 4 MiB
  edge report: write stats by cpu0.poll after send0, send1
      aggregate kv_sent[0]
}
