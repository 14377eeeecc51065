# The non-atomic gradient adds of the failing twin, serialised: the second kernel waits for the
# first (an event on stream s1), so each load sees the other's store.
policy "grad-add-nonatomic-serialized"

fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 80 GiB
region g[i in 0..2] in hbm0 at 0x1000_0000 + i * 16 MiB size 16 MiB owner gpu0 dtype fp32 init
region grad in hbm0 at 0x2000_0000 size 16 MiB owner gpu0 dtype fp32 init  # zeroed

flow backward {
  edge add0: reduce(sum, nonatomic) g[0] -> grad by gpu0.launch stream s1
  edge add1: reduce(sum, nonatomic) g[1] -> grad by gpu0.launch stream s2 after add0  # an event wait orders the two kernels
  edge step: read grad by gpu0.launch stream s1 after add0, add1 expects sum of add0, add1
}
