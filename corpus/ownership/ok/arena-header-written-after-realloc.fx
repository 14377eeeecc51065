# Fixed twin of fail/arena-header-read-after-realloc.fx: after the header is allocated again,
# it is written before it is read.
policy "arena-header-written-after-realloc"

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
  edge wr2: write hdr by gpu0.launch after a2
  edge rd: read hdr by gpu0.launch after wr2
  edge free2: release hdr return_pool by gpu0.free after rd
  edge free_big: release big return_pool by gpu0.free after free2
}
