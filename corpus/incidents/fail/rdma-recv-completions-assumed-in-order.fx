# Incident (RDMA): a receiver posts two receive buffers and, on the completion of the first,
# processes both, assuming completions arrive in posting order. With several queue pairs
# feeding a shared receive queue (or an unordered transport), the second buffer can still be
# being written by the NIC, and it is still the NIC's.
# Fix: process each buffer after its own completion.
policy "rdma-recv-completions-assumed-in-order"

fabric {
  device cpu0: cpu hooks [launch]
  device nic0: nic hooks [rx, dma_done]
  link cpu0 -- nic0 : pcie ordered
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region rbuf[i in 0..2] in host0 at 0x1_0000_0000 + i * 64 KiB size 64 KiB owner nic0
region app in host0 at 0x1_2000_0000 size 128 KiB owner cpu0

flow recv {
  edge land0: write rbuf[0] by nic0.rx handoff rbuf[0]: nic0 -> cpu0
  edge land1: write rbuf[1] by nic0.rx handoff rbuf[1]: nic0 -> cpu0
  edge proc0: move rbuf[0] -> app[0, +64 KiB] by cpu0.launch after land0
  edge proc1: move rbuf[1] -> app[64 KiB, +64 KiB] by cpu0.launch after land0  # expect: FX-ORD-002, FX-OWN-001, FX-OWN-002, FX-INIT-001
  # ^ data race (write-read) on `rbuf[1]`: `land1` and `proc1` may overlap in time
  # ^ `proc1` reads byte 0x100010000 of `rbuf[1]`, which no edge writes before it
  # ^ `proc1` reads `rbuf[1]` from `cpu0`, which neither owns nor leases it then
  # ^ `proc1` accesses `rbuf[1]` while `land1` is handing it off
}
