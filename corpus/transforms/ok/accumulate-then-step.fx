# Fixed twin of fail/overwrite-accumulated.fx: the first micro-batch initialises the accumulator
# with a plain copy, and the second one adds into it with `reduce(sum)`. A write that runs before
# the reduction is an initialisation, not a lost write; the optimizer reads the total last.
policy "accumulate-then-step"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region g0 in hbm0 at 0x1000_0000 size 8 MiB owner gpu0 dtype fp32 init
region g1 in hbm0 at 0x1100_0000 size 8 MiB owner gpu0 dtype fp32 init
region acc in hbm0 at 0x1200_0000 size 8 MiB owner gpu0 dtype fp32

flow accumulate {
  edge mb0: move g0 -> acc by gpu0.launch stream main
  edge mb1: reduce(sum) g1 -> acc by gpu0.launch stream main
  edge step: read acc by gpu0.launch stream main
}
