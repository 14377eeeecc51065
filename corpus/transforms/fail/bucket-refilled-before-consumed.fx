# Data-parallel gradient buckets (as in PyTorch DDP over NCCL): the all-reduce sums every rank's
# gradients into the bucket, the optimizer reads the reduced bucket, and the next micro-step
# refills the same bucket with fresh gradients. Here the refill waits only for the all-reduce, not
# for the optimizer's read, so it may overwrite the reduced sum before the optimizer consumes it.
# The fix is to wait for the reader (`after step0`), not to make the refill a reduction: adding the
# new gradients to the old sum would corrupt both steps.
policy "bucket-refilled-before-consumed"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device gpu1: gpu hooks [launch, copy_done]
  link nv0 = gpu0 -- gpu1 : nvlink ordered
}
space hbm0 on gpu0 size 80 GiB
space hbm1 on gpu1 size 80 GiB
region grad0 in hbm0 at 0x1000_0000 size 25 MiB owner gpu0 dtype fp32 init
region grad1 in hbm1 at 0x1000_0000 size 25 MiB owner gpu0 dtype fp32 init  # registered for gpu0's copy engine
region next0 in hbm0 at 0x2000_0000 size 25 MiB owner gpu0 dtype fp32 init
region bucket in hbm0 at 0x3000_0000 size 25 MiB owner gpu0 dtype fp32

flow step {
  edge fill0: move grad0 -> bucket by gpu0.copy_done
  edge ar1: reduce(sum) grad1 -> bucket by gpu0.copy_done after fill0
  edge step0: read bucket by gpu0.launch after ar1
  edge fill1: move next0 -> bucket by gpu0.copy_done after ar1  # expect: FX-ORD-002, FX-XF-004
  # ^ data race (read-write) on `bucket`: `step0` and `fill1` may overlap in time
  # ^ `fill1` overwrites bytes that `ar1` accumulated before anyone read them
}
