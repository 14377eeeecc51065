# Fixed twin of fail/reads-in-two-alias-sets.fx: each lane reads its own 4 KiB of the staging
# buffer, so the two alias sets really share no byte.
policy "reads-in-two-alias-sets"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region wstage in hbm0 at 0x3000_0000 size 1 MiB owner gpu0 dtype bf16 init
region q_in in hbm0 at 0x3100_0000 size 64 KiB owner gpu0 dtype bf16
region k_in in hbm0 at 0x3200_0000 size 64 KiB owner gpu0 dtype bf16
alias_set q_lane = [q_in]
alias_set k_lane = [k_in]

flow load {
  edge load_q: move wstage[0, +4 KiB] -> q_in[0, +4 KiB] by gpu0.launch alias q_lane
  edge load_k: move wstage[4 KiB, +4 KiB] -> k_in[0, +4 KiB] by gpu0.copy_done alias k_lane
}
