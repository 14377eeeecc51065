# Gradient accumulation: the first micro-batch initialises the accumulator, the second adds to it,
# and the optimizer step reads it expecting their sum. Between the last micro-batch and the step,
# a clipping kernel folds `max(acc, floor)` into the accumulator with `reduce(max)`. Every pair is
# ordered on one stream, so nothing races, but the step no longer reads the sum it declares: a
# reduction by an edge that is not a producer changes the accumulation.
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
  edge clip: reduce(max) floor -> acc by gpu0.launch stream main  # expect: FX-XF-004
  # ^ `clip` folds a contribution `step` does not expect (`reduce(max)`) into that of `mb0` before `step` reads it
  # ^ `clip` folds a contribution `step` does not expect (`reduce(max)`) into that of `mb1` before `step` reads it
  edge step: read acc by gpu0.launch stream main expects sum of mb0, mb1
}
