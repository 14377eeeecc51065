# Fixed twin of fail/prefix-cache-published-before-fill.fx: the hash is published after the kernel
# that fills the block (`publish` is `after fill`), so a request that finds it reads a full block.
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
  edge publish: write meta by gpu0.launch stream sched after fill map_write prefix_index[42] = 1
  edge hit: move blk -> out by gpu0.launch stream req2 after publish guard prefix_index[42] == 1
}
