# A data-parallel gradient bucket is filled by two backward streams: the main stream writes the
# first half, a side stream (say, for the embedding grads) the second half. The reduction waits
# only for the main stream, so it can sum a half-written second half into the accumulator.
# Waiting on one producer is not waiting on the bucket: wait on every stream that writes it.
# The second half may not be written at all when the reduction reads it (FX-INIT-001).
policy "grad-bucket-one-producer"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region bucket in hbm0 at 0x4000_0000 size 32 MiB owner gpu0 dtype fp32
region accum in hbm0 at 0x4200_0000 size 32 MiB owner gpu0 dtype fp32 init  # zeroed before the step

flow backward {
  edge bw_main: write bucket[0, +16 MiB] by gpu0.launch stream main
  edge bw_side: write bucket[16 MiB, +16 MiB] by gpu0.launch stream side
  edge allreduce: reduce(sum) bucket -> accum by gpu0.launch stream comm after bw_main  # expect: FX-ORD-002, FX-INIT-001
  # ^ data race (write-read) on `bucket`: `bw_side` and `allreduce` may overlap in time
  # ^ `allreduce` reads byte 0x41000000 of `bucket`, fp32 element 4194304, which no edge writes before it
}
