# Fixed twin of fail/allgather-inplace-wrong-offset.fx: rank 2's 1 MiB shard lives at its own
# slot of the receive buffer, 0x5000_0000 + 2 x 1 MiB = 0x5020_0000, so the in-place all-gather
# never overwrites a byte before sending it. Source and destination overlap, legally.
policy "allgather-inplace-rank-offset"

fabric {
  device gpu2: gpu hooks [launch, copy_done]
}
space hbm2 on gpu2 size 80 GiB
region recv in hbm2 at 0x5000_0000 size 4 MiB owner gpu2 dtype bf16
region shard in hbm2 at 0x5020_0000 size 1 MiB owner gpu2 dtype bf16 init  # slot 2 = recv + 2 x 1 MiB
alias_set ag_buf = [recv, shard]

flow allgather {
  edge ag: move shard -> recv by gpu2.launch transform gather(4, rank 2)
}
