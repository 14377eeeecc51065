# Two backward streams add their gradient contributions into one fp32 `.grad` buffer with
# `grad.add_(g)`: an elementwise kernel that loads, adds and stores, not an atomic accumulate. A
# plain `reduce(sum)` would say the adds are atomic (and so commute); `nonatomic` says they are
# not, so the two kernels may interleave a load of one with the store of the other, and one
# contribution is lost. Concurrent non-atomic accumulations race like writes.
policy "grad-add-nonatomic-two-streams"

fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 80 GiB
region g[i in 0..2] in hbm0 at 0x1000_0000 + i * 16 MiB size 16 MiB owner gpu0 dtype fp32 init
region grad in hbm0 at 0x2000_0000 size 16 MiB owner gpu0 dtype fp32 init  # zeroed

flow backward {
  edge add0: reduce(sum, nonatomic) g[0] -> grad by gpu0.launch stream s1
  edge add1: reduce(sum, nonatomic) g[1] -> grad by gpu0.launch stream s2  # expect: FX-ORD-002
  # ^ data race (non-atomic reduce) on `grad`: `add0` and `add1` may overlap in time
  edge step: read grad by gpu0.launch stream s1 after add0, add1 expects sum of add0, add1
}
