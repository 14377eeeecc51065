# Fixed twin of fail/accumulate-by-overwrite.fx: the first micro-batch initialises the accumulator
# with a plain move, HB-first, and the others add into it with `reduce(sum)`, the operator the step
# declares with `expects sum of mb[*]`. Every contribution lands before the step and no plain write
# follows one, so the step reads the sum of all three.
policy "accumulate-by-reduce"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region g[i in 0..3] in hbm0 at 0x1000_0000 + i * 16 MiB size 8 MiB owner gpu0 dtype fp32 init
region acc in hbm0 at 0x1300_0000 size 8 MiB owner gpu0 dtype fp32

flow accumulate {
  edge mb[0]: move g[0] -> acc by gpu0.launch stream main
  for i in 1..3 {
    edge mb[i]: reduce(sum) g[i] -> acc by gpu0.launch stream main
  }
  edge step: read acc by gpu0.launch stream main expects sum of mb[*]
}
