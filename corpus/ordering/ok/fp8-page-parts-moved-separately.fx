# The fp8 page of fail/fp8-page-scales-not-moved.fx, fixed another way: each part of the layout
# (data, scales, rope keys) is moved by its own copy, the first two in parallel, and decode waits
# for all three. Every byte decode reads lies in a part that one of them wrote before it: the
# parts together cover the page, however it is split.
policy "fp8-page-parts-moved-separately"

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
  edge xfer_data: move data0 -> data1 by gpu0.copy_done after quant
  edge xfer_scales: move scales0 -> scales1 by gpu0.copy_done after quant
  edge xfer_rope: move rope0 -> rope1 by gpu0.copy_done after xfer_data, xfer_scales handoff page1: gpu0 -> gpu1
  edge decode: read page1 by gpu1.launch after xfer_rope
}
