# Fixed twin of fail/mixed-reduce-ops.fx: both partial results are folded with `sum`, which is
# associative and commutative, so the two unordered reductions into the logits buffer give the
# same result in either order (reduction privileges: they do not conflict).
policy "same-reduce-op"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region part0 in hbm0 at 0x1000_0000 size 512 KiB owner gpu0 dtype fp32 init
region part1 in hbm0 at 0x1010_0000 size 512 KiB owner gpu0 dtype fp32 init
region logits in hbm0 at 0x1020_0000 size 512 KiB owner gpu0 dtype fp32 init  # zeroed before the flow

flow combine {
  edge fold0: reduce(sum) part0 -> logits by gpu0.launch
  edge fold1: reduce(sum) part1 -> logits by gpu0.copy_done
}
