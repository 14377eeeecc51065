# The spill is attached to `gpu0.copy_complete`, but gpu0 declares the hook as `copy_done`. A
# policy program can run only at a hook its device declares, so this edge would never run. The
# help line suggests the closest declared hook.
policy "undeclared-hook"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 dtype bf16
region pool in hdm0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16

flow spill {
  edge attn: write kv by gpu0.launch
  edge spill: move kv -> pool by gpu0.copy_complete after attn  # expect: FX-HOOK-002
  # ^ `spill` is driven by `gpu0.copy_complete`, but `gpu0` declares no hook `copy_complete`
}
