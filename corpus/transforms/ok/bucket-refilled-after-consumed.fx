# The fix of transforms/fail/bucket-refilled-before-consumed.fx: the refill of the gradient bucket
# waits for the optimizer's read of the reduced sum (`after step0`, which itself follows the
# reduction), so every reduced byte is consumed before fresh gradients overwrite it.
policy "bucket-refilled-after-consumed"

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
  edge fill1: move next0 -> bucket by gpu0.copy_done after step0
}
