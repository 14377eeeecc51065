# The same two interleaved strided writers as fail/budget-exhausted.fx, now with a solver budget
# large enough to decide the question: the even and odd 64 B elements never share a byte, so the
# unordered writers do not race and the policy is proved. A budget (`rlimit`) makes effort, and so
# verdicts, repeatable across machines; wall-clock time does not.
policy "budget-sufficient" rlimit 5_000_000

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region page in hbm0 at 0x1000_0000 size 64 KiB owner gpu0 dtype bf16

flow fill {
  edge even: write page[0, elem 64, stride 128, count 512] by gpu0.launch
  edge odd: write page[64, elem 64, stride 128, count 512] by gpu0.copy_done
}
