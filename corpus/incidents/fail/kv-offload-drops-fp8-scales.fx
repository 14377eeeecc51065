# Incident (KV-cache offload): an fp8 KV cache keeps one fp32 scale per 128 values beside each
# block's data. The offload connector was written for bf16 caches: it copies the block's data to
# host memory and back, but never its scales. After a reload into a fresh GPU block, attention
# dequantises the data with scales that nothing wrote: whatever that block's scale slots held.
# Nothing crashes; the model's output is silently wrong after every reload.
# Fix: offload and reload the whole block, data and scales (see ok/kv-offload-drops-fp8-scales.fx).
policy "kv-offload-drops-fp8-scales"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
# the block that is offloaded (64 KiB of fp8 data, then 512 fp32 scales), its host copy, and the
# block it is reloaded into, each laid out the same way
region blk_a in hbm0 at 0x4000_0000 size 66 KiB owner gpu0
region data_a in hbm0 at 0x4000_0000 size 64 KiB owner gpu0 dtype fp8
region scales_a in hbm0 at 0x4001_0000 size 2 KiB owner gpu0 dtype fp32
alias_set a = [blk_a, data_a, scales_a]
region blk_h in host0 at 0x1_4000_0000 size 66 KiB owner gpu0
region data_h in host0 at 0x1_4000_0000 size 64 KiB owner gpu0 dtype fp8
region scales_h in host0 at 0x1_4001_0000 size 2 KiB owner gpu0 dtype fp32
alias_set h = [blk_h, data_h, scales_h]
region blk_b in hbm0 at 0x4100_0000 size 66 KiB owner gpu0
region data_b in hbm0 at 0x4100_0000 size 64 KiB owner gpu0 dtype fp8
region scales_b in hbm0 at 0x4101_0000 size 2 KiB owner gpu0 dtype fp32
alias_set b = [blk_b, data_b, scales_b]

flow offload_and_reload {
  edge prefill: write blk_a by gpu0.launch stream compute
  edge offload: move data_a -> data_h by gpu0.copy_done stream copy after prefill
  edge reload: move data_h -> data_b by gpu0.copy_done stream copy after offload
  edge decode: read blk_b by gpu0.launch stream compute after reload  # expect: FX-INIT-001
  # ^ `decode` reads byte 0x41010000 of `scales_b`, fp32 element 0, which no edge writes before it
}
