# Incident (RDMA): a server deregisters and frees a buffer whose rkey a peer is still using for
# RDMA READs. It registered the buffer, sent the rkey, and freed it when its own work was done,
# without waiting for the peer to say it has finished reading: the peer's READ either fails with
# a protection error or, once the memory is reused, returns someone else's bytes.
# Fix: deregister and free only after the peer's "read done" message, which follows its reads.
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
  edge remote_read: read mr by nic0.tx after reg  # expect: FX-OWN-001
  # ^ `remote_read` reads `mr` from `nic0`, which neither owns nor leases it then
  edge dereg: release mr free by cpu0.free after reg revoke mr from nic0  # expect: FX-OWN-004
  # ^ `dereg` releases `mr` (free) while `remote_read` may still use it
}
