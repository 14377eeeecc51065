# Fixed twin of fail/rdma-send-buffer-reused-before-completion.fx: the next message is written into
# the buffer only after the completion of the send that read it has been polled (`after poll0`).
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
  edge fill1: write sbuf by cpu0.launch after poll0 lease sbuf to nic0
  edge xmit1: read sbuf by nic0.tx after fill1
}
