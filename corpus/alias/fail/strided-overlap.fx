# The V writer uses a stride of 96 B instead of 128 B (a head-size mix-up), so its 64 B elements
# drift into the K slots: V element 1 covers [160, 224) of the page and K element 1 covers
# [128, 192). The writers promised disjoint footprints (`alias` in different alias sets); the
# trace shows the first shared address and the element index on each side. The writers are
# ordered here, to show the broken promise alone: ordering does not make an alias promise true.
policy "strided-overlap"

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
  edge put_v: move v_new -> page[64, elem 64, stride 96, count 512] by gpu0.copy_done alias v_lanes after put_k  # expect: FX-ALIAS-001
  # ^ `put_k` (alias set `k_lanes`) and `put_v` (alias set `v_lanes`) touch the same byte
}
