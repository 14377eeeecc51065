# Fixed twin of fail/short-copy-read-whole.fx: the copy still moves 32 KiB into the 41 KiB staging
# buffer, and the send now reads only the 32 KiB the copy wrote. A destination larger than the
# bytes moved is fine; reading the part nobody wrote is the bug.
policy "short-copy-read-copied"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space ddr0 on dpu0 size 16 GiB
region kv_data in hbm0 at 0x4000_0000 size 32 KiB owner gpu0 dtype fp8 init  # computed before the flow
region stage in ddr0 at 0x10_0000 size 41 KiB owner gpu0

flow send_page {
  edge copy: move kv_data -> stage by gpu0.copy_done handoff stage: gpu0 -> dpu0
  edge send: read stage[0, +32 KiB] by dpu0.tx after copy
}
