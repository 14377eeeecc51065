# Gradient accumulation over micro-batches by plain moves: each micro-batch *copies* its gradient
# into the accumulator, in order, and the optimizer step reads it expecting their sum. No reduce is
# involved, so no reduction can be lost; only the consumer knows it wants an accumulation. With
# `expects sum of mb0, mb1, mb2` every plain write between a contribution and the step is a lost
# contribution. Accumulate with `reduce(sum)` (the first micro-batch may initialise by a move).
policy "accumulate-by-overwrite"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region g0 in hbm0 at 0x1000_0000 size 8 MiB owner gpu0 dtype fp32 init
region g1 in hbm0 at 0x1100_0000 size 8 MiB owner gpu0 dtype fp32 init
region g2 in hbm0 at 0x1200_0000 size 8 MiB owner gpu0 dtype fp32 init
region acc in hbm0 at 0x1300_0000 size 8 MiB owner gpu0 dtype fp32

flow accumulate {
  edge mb0: move g0 -> acc by gpu0.launch stream main
  edge mb1: move g1 -> acc by gpu0.launch stream main  # expect: FX-XF-004
  # ^ `mb1` overwrites the contribution of `mb0` before `step` reads the accumulation
  edge mb2: move g2 -> acc by gpu0.launch stream main  # expect: FX-XF-004
  # ^ `mb2` overwrites the contribution of `mb0` before `step` reads the accumulation
  # ^ `mb2` overwrites the contribution of `mb1` before `step` reads the accumulation
  edge step: read acc by gpu0.launch stream main expects sum of mb0, mb1, mb2
}
