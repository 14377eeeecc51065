# An fp8 KV page has three parts: 32 KiB of fp8 data, 1 KiB of fp32 scales (one per 128 elements)
# and 8 KiB of bf16 rope keys. The transfer to the decode GPU moves only the data part, yet decode
# reads the whole page: its scales and rope keys are whatever the decode GPU's memory held before.
# FX-INIT-001 names the first byte nothing wrote: scale 0 of `scales1`.
# Fix: move the whole page, every part of its layout (see ok/fp8-page-scales-moved.fx).
policy "fp8-page-scales-not-moved"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device gpu1: gpu hooks [launch]
  link gpu0 -- gpu1 : nvlink ordered
}
space hbm0 on gpu0 size 80 GiB
space hbm1 on gpu1 size 80 GiB
# the prefill GPU's page and its parts
region page0 in hbm0 at 0x10_0000 size 41 KiB owner gpu0
region data0 in hbm0 at 0x10_0000 size 32 KiB owner gpu0 dtype fp8
region scales0 in hbm0 at 0x10_8000 size 1 KiB owner gpu0 dtype fp32
region rope0 in hbm0 at 0x10_8400 size 8 KiB owner gpu0 dtype bf16
alias_set pages0 = [page0, data0, scales0, rope0]
# the decode GPU's page, laid out the same way
region page1 in hbm1 at 0x20_0000 size 41 KiB owner gpu0
region data1 in hbm1 at 0x20_0000 size 32 KiB owner gpu0 dtype fp8
region scales1 in hbm1 at 0x20_8000 size 1 KiB owner gpu0 dtype fp32
region rope1 in hbm1 at 0x20_8400 size 8 KiB owner gpu0 dtype bf16
alias_set pages1 = [page1, data1, scales1, rope1]

flow transfer {
  edge quant: write page0 by gpu0.launch
  edge xfer: move data0 -> data1 by gpu0.copy_done after quant handoff page1: gpu0 -> gpu1
  edge decode: read page1 by gpu1.launch after xfer  # expect: FX-INIT-001
  # ^ `decode` reads byte 0x208000 of `scales1`, fp32 element 0, which no edge writes before it
}
