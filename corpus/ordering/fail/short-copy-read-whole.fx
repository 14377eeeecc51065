# A staging buffer on the DPU is sized for a whole fp8 KV page with its scales and rope keys
# (41 KiB), but the copy into it moves only the 32 KiB data part: a move writes as many bytes as
# its source has, from the start of its destination. The send then reads all 41 KiB, so its last
# 9 KiB are whatever the buffer held before. Sizing the destination for the page moved no bytes.
# Fix: copy the whole page, or send only what was copied (see ok/short-copy-read-copied.fx).
policy "short-copy-read-whole"

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
  edge send: read stage by dpu0.tx after copy  # expect: FX-INIT-001
  # ^ `send` reads byte 0x108000 of `stage`, which no edge writes before it
}
