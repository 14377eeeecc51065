# Incident (RDMA): an application posts an RDMA send from a registered buffer and, as soon as
# `ibv_post_send` returns, writes the next message into the same buffer. Posting only queues the
# work request: the NIC reads the buffer by DMA later, and only the send's completion (a CQE)
# says it is done. The peer receives the second message, or a mix of both.
# Fix: reuse the buffer only after polling the completion of the send that reads it.
policy "rdma-send-buffer-reused-before-completion"

fabric {
  device cpu0: cpu hooks [launch]
  device nic0: nic hooks [tx, dma_done]
  link cpu0 -- nic0 : pcie ordered
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region sbuf in host0 at 0x1_0000_0000 size 64 KiB owner cpu0
region cq in host0 at 0x1_1000_0000 size 4 KiB owner cpu0 init

flow sends {
  edge fill0: write sbuf by cpu0.launch lease sbuf to nic0
  edge xmit0: read sbuf by nic0.tx after fill0
  edge poll0: read cq by cpu0.launch after xmit0
  edge fill1: write sbuf by cpu0.launch after fill0 lease sbuf to nic0  # expect: FX-ORD-002
  # ^ data race (read-write) on `sbuf`: `xmit0` and `fill1` may overlap in time
  edge xmit1: read sbuf by nic0.tx after fill1
}
