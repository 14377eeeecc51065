# Incident (disaggregated prefill): decode attention starts on KV blocks that are still arriving
# because the "KV ready" notification is sent when the transfer is issued, not when it completes.
# The decode instance gave the prefill instance blocks to write the request's KV into, and the
# prefill side pushes the KV over RDMA; until the transfer completes the blocks are still the
# prefill side's.
# Fix: send the notification after the transfer's completion, which also returns the blocks.
policy "pd-decode-reads-kv-before-transfer-done"

fabric {
  device gpu_p: gpu hooks [launch, copy_done]
  device nic_p: nic hooks [tx, dma_done]
  device nic_d: nic hooks [rx, dma_done]
  device gpu_d: gpu hooks [launch, copy_done]
  link gpu_p -- nic_p : pcie ordered
  link nic_p -- nic_d : rdma ordered
  link nic_d -- gpu_d : pcie ordered
}
space hbm_p on gpu_p size 80 GiB
space hbm_d on gpu_d size 80 GiB
region kv_p in hbm_p at 0x4000_0000 size 8 MiB owner gpu_p dtype bf16
region note in hbm_p at 0x5000_0000 size 4 KiB owner gpu_p
region kv_d in hbm_d at 0x4000_0000 size 8 MiB owner gpu_d dtype bf16
region ctl in hbm_d at 0x5000_0000 size 4 KiB owner gpu_d
region out in hbm_d at 0x6000_0000 size 8 MiB owner gpu_d dtype bf16

flow disagg {
  edge grant: write ctl by gpu_d.launch handoff kv_d: gpu_d -> gpu_p
  edge prefill: write kv_p by gpu_p.launch
  edge xfer: move kv_p -> kv_d by gpu_p.copy_done after prefill, grant handoff kv_d: gpu_p -> gpu_d
  edge notify: write note by gpu_p.launch after prefill, grant
  edge decode: move kv_d -> out by gpu_d.launch after notify  # expect: FX-ORD-002, FX-OWN-001, FX-OWN-002, FX-INIT-001
  # ^ data race (write-read) on `kv_d`: `xfer` and `decode` may overlap in time
  # ^ `decode` reads byte 0x40000000 of `kv_d`, bf16 element 0, which no edge writes before it
  # ^ `decode` reads `kv_d` from `gpu_d`, which neither owns nor leases it then
  # ^ `decode` accesses `kv_d` while `xfer` is handing it off
}
