# Fixed twin of fail/clip-folded-into-expected-sum.fx: the step reads the sum it expects first,
# and the clip runs on the accumulator after it (the next step's input), so no reduction but the
# declared producers' lands between a contribution and the step.
policy "clip-folded-into-expected-sum"

fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 80 GiB
region g0 in hbm0 at 0x1000_0000 size 1 MiB owner gpu0 dtype fp32 init
region g1 in hbm0 at 0x2000_0000 size 1 MiB owner gpu0 dtype fp32 init
region floor in hbm0 at 0x3000_0000 size 1 MiB owner gpu0 dtype fp32 init
region acc in hbm0 at 0x4000_0000 size 1 MiB owner gpu0 dtype fp32

flow train {
  edge mb0: move g0 -> acc by gpu0.launch stream main
  edge mb1: reduce(sum) g1 -> acc by gpu0.launch stream main
  edge step: read acc by gpu0.launch stream main expects sum of mb0, mb1
  edge clip: reduce(max) floor -> acc by gpu0.launch stream main
}
