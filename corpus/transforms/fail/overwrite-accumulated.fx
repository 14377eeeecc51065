# Gradient accumulation over micro-batches: micro-batch 0 adds its gradient into the accumulator,
# then micro-batch 1 *copies* its gradient over it (a plain move where a reduce was meant) before
# the optimizer has read anything. The first micro-batch's contribution is silently lost.
# Micro-batch 0 also adds into an accumulator nothing initialised (FX-INIT-001).
policy "overwrite-accumulated"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region g0 in hbm0 at 0x1000_0000 size 8 MiB owner gpu0 dtype fp32 init
region g1 in hbm0 at 0x1100_0000 size 8 MiB owner gpu0 dtype fp32 init
region acc in hbm0 at 0x1200_0000 size 8 MiB owner gpu0 dtype fp32

flow accumulate {
  edge mb0: reduce(sum) g0 -> acc by gpu0.launch stream main  # expect: FX-INIT-001
  # ^ `mb0` reduces into byte 0x12000000 of `acc`, fp32 element 0, which no edge writes before it
  edge mb1: move g1 -> acc by gpu0.launch stream main  # expect: FX-XF-004
  # ^ `mb1` overwrites bytes that `mb0` accumulated before anyone read them
  edge step: read acc by gpu0.launch stream main
}
