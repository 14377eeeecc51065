# An arena `big` and its header block `hdr` start at the same address, both pooled, in one alias
# set. The header is allocated, written and freed, then allocated again and read at once: the
# read finds the previous allocation's bytes, which nothing of this allocation wrote. Two
# allocated regions sharing a base must each be checked on their own chain of allocations.
# Fixed twin: ok/arena-header-written-after-realloc.fx.
policy "arena-header-read-after-realloc"

fabric {
  device gpu0: gpu hooks [launch, alloc, free]
}
space hbm0 on gpu0 size 80 GiB
region big in hbm0 at 0x0 size 64 KiB owner gpu0 pooled
region hdr in hbm0 at 0x0 size 64 owner gpu0 pooled
alias_set arena = [big, hdr]

flow f {
  edge a_big: alloc big to gpu0 by gpu0.alloc
  edge a1: alloc hdr to gpu0 by gpu0.alloc after a_big
  edge wr: write hdr by gpu0.launch after a1
  edge free1: release hdr return_pool by gpu0.free after wr
  edge a2: alloc hdr to gpu0 by gpu0.alloc after free1
  edge rd: read hdr by gpu0.launch after a2  # expect: FX-INIT-001
  # ^ `rd` reads byte 0x0 of `hdr`, which no edge writes in its allocation: `wr` wrote it before `a2` allocated it again
  edge free2: release hdr return_pool by gpu0.free after rd
  edge free_big: release big return_pool by gpu0.free after free2
}
