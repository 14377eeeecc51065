# Incident (disaggregated prefill): the prefill worker pushes the KV cache to the decode worker
# layer by layer, as each layer's attention finishes. The push loop stops one layer short (it
# counts layers from 1 but compares with `<` against the layer count), and the completion message
# is sent after the pushes the loop made. The decode worker starts on the message and reads every
# layer: the last layer's KV blocks are whatever its buffer held, and it decodes garbage.
# Fix: push every layer, the last included, before the completion message.
policy "pd-last-layer-never-sent"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device gpu1: gpu hooks [launch]
  link gpu0 -- gpu1 : nvlink ordered
}
space hbm0 on gpu0 size 80 GiB
space hbm1 on gpu1 size 80 GiB
region kv[l in 0..4] in hbm0 at 0x4000_0000 + l * 2 MiB size 2 MiB owner gpu0 dtype bf16
region remote in hbm1 at 0x8000_0000 size 8 MiB owner gpu0 dtype bf16
region remote_kv[l in 0..4] in hbm1 at 0x8000_0000 + l * 2 MiB size 2 MiB owner gpu0 dtype bf16
alias_set r = [remote, remote_kv[*]]
region msg in hbm1 at 0x9000_0000 size 64 owner gpu0

flow prefill {
  for l in 0..4 {
    edge attn[l]: write kv[l] by gpu0.launch stream compute
  }
  for l in 0..3 {
    edge push[l]: move kv[l] -> remote_kv[l] by gpu0.copy_done stream copy after attn[l]
  }
  edge done: write msg by gpu0.copy_done stream copy after push[*] handoff remote: gpu0 -> gpu1
  edge decode: read remote by gpu1.launch after done  # expect: FX-INIT-001
  # ^ `decode` reads byte 0x80600000 of `remote_kv[3]`, bf16 element 0, which no edge writes before it
}
