# A paged KV layout interleaves K and V per head: K in the even 64 B slots of the page, V in the
# odd ones. The K and V writers run unordered and promise, with `alias` clauses, that their
# footprints are disjoint. They share the bounding interval of the page, but the strided
# footprints {k*128 + o} and {64 + k*128 + o} (0 <= o < 64) never meet, and the checker proves it.
policy "interleaved-strided"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region page in hbm0 at 0x1000_0000 size 64 KiB owner gpu0
region k_new in hbm0 at 0x2000_0000 size 32 KiB owner gpu0 init
region v_new in hbm0 at 0x2100_0000 size 32 KiB owner gpu0 init
alias_set k_lanes = [k_new]
alias_set v_lanes = [v_new]

flow append {
  edge put_k: move k_new -> page[0, elem 64, stride 128, count 512] by gpu0.launch alias k_lanes
  edge put_v: move v_new -> page[64, elem 64, stride 128, count 512] by gpu0.copy_done alias v_lanes
}
