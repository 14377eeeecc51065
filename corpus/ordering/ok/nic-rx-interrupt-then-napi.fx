# A NIC receive path: the NIC lands a packet in host memory, writes the completion entry, then
# raises an MSI-X interrupt (a posted write to the host's interrupt address, modelled as a write
# into `msix` that notifies the entry). The interrupt handler reads the entry and the NAPI poll
# then reads the packet. All three writes come from the NIC along its one path into host
# memory, in order, so the interrupt the handler waited for brings the entry and the packet
# before it: no flush, although the interrupt names only the entry.
policy "nic-rx-interrupt-then-napi"

fabric {
  device cpu0: cpu hooks [isr, napi]
  device nic0: nic hooks [rx, tx, irq]
  link pcie0 = cpu0 -- nic0 : pcie posted
}
space host0 on cpu0 size 64 GiB
space nicmem on nic0 size 1 GiB
region wire_in in nicmem at 0x0 size 4 KiB owner nic0 init
region pkt in host0 at 0x1000_0000 size 4 KiB owner nic0
region cq in host0 at 0x2000_0000 size 4 KiB owner nic0
region msix in host0 at 0xfee0_0000 size 4 KiB owner nic0

flow receive {
  edge land: move wire_in -> pkt by nic0.rx lease pkt to cpu0
  edge cqe: write cq[0, +64] by nic0.tx after land notifies land lease cq to cpu0
  edge irq: write msix[0, +4] by nic0.irq after cqe notifies cqe
  edge isr: read cq[0, +64] by cpu0.isr after irq
  edge napi: read pkt by cpu0.napi after isr
}
