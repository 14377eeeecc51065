# Incident (KV-cache offload): a prefix cache registers a block's hash in its index as soon as
# the block is scheduled, on the scheduler's side, while the attention kernel that fills the
# block is still running. A second request with the same prefix finds the hash, trusts the
# index and reads the block: it can read KV that is only partly written.
# Fix: publish the hash only after the kernel that fills the block has finished.
policy "prefix-cache-published-before-fill"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region blk in hbm0 at 0x4000_0000 size 2 MiB owner gpu0 dtype bf16
region meta in hbm0 at 0x5000_0000 size 4 KiB owner gpu0
region out in hbm0 at 0x5100_0000 size 2 MiB owner gpu0 dtype bf16
map prefix_index: hash<u32, u32>[1024] class linearizable

flow two_requests {
  edge fill: write blk by gpu0.launch stream compute
  edge publish: write meta by gpu0.launch stream sched map_write prefix_index[42] = 1
  edge hit: move blk -> out by gpu0.launch stream req2 after publish guard prefix_index[42] == 1  # expect: FX-ORD-002, FX-INIT-001
  # ^ data race (write-read) on `blk`: `fill` and `hit` may overlap in time
  # ^ `hit` reads byte 0x40000000 of `blk`, bf16 element 0, which no edge writes before it
}
