# Fixed twin of fail/rdma-mr-deregistered-during-remote-read.fx: the server deregisters and frees the
# buffer after the peer's reads, on the peer's "read done" message (`after remote_read`).
policy "rdma-mr-deregistered-during-remote-read"

fabric {
  device cpu0: cpu hooks [launch, free]
  device nic0: nic hooks [rx, tx, dma_done]
  link cpu0 -- nic0 : pcie ordered
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region mr in host0 at 0x1_0000_0000 size 1 MiB owner cpu0

flow serve {
  edge reg: write mr by cpu0.launch lease mr to nic0
  edge remote_read: read mr by nic0.tx after reg
  edge dereg: release mr free by cpu0.free after remote_read revoke mr from nic0
}
