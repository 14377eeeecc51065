# Fixed twin of fail/grad-bucket-one-producer.fx: the reduction of the gradient bucket waits for
# both backward streams that write into it (`after bw_main, bw_side`). The two producers write
# disjoint halves, so they may still run in parallel with each other.
policy "grad-bucket-all-producers"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region bucket in hbm0 at 0x4000_0000 size 32 MiB owner gpu0 dtype fp32
region accum in hbm0 at 0x4200_0000 size 32 MiB owner gpu0 dtype fp32 init  # zeroed before the step

flow backward {
  edge bw_main: write bucket[0, +16 MiB] by gpu0.launch stream main
  edge bw_side: write bucket[16 MiB, +16 MiB] by gpu0.launch stream side
  edge allreduce: reduce(sum) bucket -> accum by gpu0.launch stream comm after bw_main, bw_side
}
