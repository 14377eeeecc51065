# Two tensor-parallel partial results are folded into one logits buffer without an order between
# them: one with `sum`, the other with `max` (a softmax-statistics kernel reused by mistake). Sum
# and max do not commute with each other, so the result depends on which reduction lands first.
# Unordered reductions into shared bytes must all use one associative, commutative operator.
policy "mixed-reduce-ops"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region part0 in hbm0 at 0x1000_0000 size 512 KiB owner gpu0 dtype fp32 init
region part1 in hbm0 at 0x1010_0000 size 512 KiB owner gpu0 dtype fp32 init
region logits in hbm0 at 0x1020_0000 size 512 KiB owner gpu0 dtype fp32 init  # zeroed before the flow

flow combine {
  edge fold0: reduce(sum) part0 -> logits by gpu0.launch
  edge fold1: reduce(max) part1 -> logits by gpu0.copy_done  # expect: FX-XF-004
  # ^ `fold0` (`sum`) and `fold1` (`max`) reduce into the same bytes in either order, and the result depends on it
}
