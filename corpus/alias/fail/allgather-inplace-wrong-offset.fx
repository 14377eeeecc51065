# An in-place all-gather over 4 ranks: rank 2 sends its 1 MiB shard from inside the 4 MiB receive
# buffer. That is legal only when the send buffer sits at the rank's own slot, recv + rank x shard
# (NCCL: sendbuff == recvbuff + rank * sendcount). Here rank 2's shard sits at slot 1, so the
# gather overwrites bytes it has not sent yet (slot 1 is rank 1's incoming data).
policy "allgather-inplace-wrong-offset"

fabric {
  device gpu2: gpu hooks [launch, copy_done]
}
space hbm2 on gpu2 size 80 GiB
region recv in hbm2 at 0x5000_0000 size 4 MiB owner gpu2 dtype bf16
region shard in hbm2 at 0x5010_0000 size 1 MiB owner gpu2 dtype bf16 init  # slot 1, not slot 2
alias_set ag_buf = [recv, shard]

flow allgather {
  edge ag: move shard -> recv by gpu2.launch transform gather(4, rank 2)  # expect: FX-ALIAS-002
  # ^ `ag` reads and writes overlapping bytes and is not a legal in-place operation
}
