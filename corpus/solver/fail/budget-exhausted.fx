# Unknown is never a pass. This policy gives the solver a budget far too small to decide whether
# two strided writers into one page can touch the same byte, so the verdict is unknown (FX-SMT-001)
# and the gate fails, even though the writers are in fact disjoint. Raise the budget (or drop
# `rlimit`) and the same obligation is proved: see ok/budget-sufficient.fx.
policy "budget-exhausted" rlimit 1

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region page in hbm0 at 0x1000_0000 size 64 KiB owner gpu0 dtype bf16

flow fill {
  edge even: write page[0, elem 64, stride 128, count 512] by gpu0.launch
  edge odd: write page[64, elem 64, stride 128, count 512] by gpu0.copy_done  # expect: FX-SMT-001
  # ^ could not decide FX-ORD-002 for `even`, `odd`: max. resource limit exceeded
}
