# A GPU checkpoints a KV block into a persistent CXL memory window over a `posted` PCIe link, and
# nothing reads it back. `transform persist` says the bytes are durable, but a posted write
# completes at the sender before it reaches the device: until a flush of the link issued after
# the write has finished, a power loss can drop it (PCIe posted writes; CXL GPF covers only what
# reached the device). No reader exists, so no read-before-flush finding would show it.
policy "persist-over-posted-no-flush"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem
  link up0 = gpu0 -- cxl0 : pcie posted
}
space hbm0 on gpu0 size 80 GiB
space pmem0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent
region kv in hbm0 at 0x1000_0000 size 2 MiB owner gpu0 dtype bf16 init
region ckpt in pmem0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16

flow save {
  edge spill: move kv -> ckpt by gpu0.copy_done transform persist  # expect: FX-ORD-003
  # ^ `spill` persists bytes over posted link `up0`, and no flush of `up0` follows it
}
