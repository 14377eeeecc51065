# A prefix-cache block holds valid KV (`fill`). A request reloads it from a remote store (the DPU's
# RDMA read lands in the block), the request is aborted and the reload cancelled, and the block
# stays marked valid: the next prefix hit reads it. A cancelled transfer may stop halfway, so the
# block holds part of the old KV and part of the aborted reload's bytes (specs/obligations.md
# section 1, cancellation; FX-INIT-001: a cancelled write that may touch a byte after the write
# that defined it leaves the byte torn). Fixed twin: ok/aborted-reload-refilled-before-hit.fx.
policy "aborted-reload-tears-cached-block"

fabric {
  device dpu0: dpu hooks [rx, tx, run]
}
space ddr0 on dpu0 size 16 GiB
space store on dpu0 base 0x10_0000_0000 size 16 GiB init  # the remote store, loaded before the flow
region blk in ddr0 at 0x0 size 256 KiB owner dpu0
region remote in store at 0x10_0000_0000 size 256 KiB owner dpu0

flow serve {
  edge fill: write blk by dpu0.run
  edge reload: move remote -> blk by dpu0.rx after fill
  edge abort: cancel reload by dpu0.rx after fill
  edge hit: read blk by dpu0.tx after abort  # expect: FX-INIT-001
  # ^ `hit` reads byte 0x0 of `blk`, which `reload` may have left half-written after `fill` wrote it: `abort` cancels `reload`, and a cancelled transfer may stop halfway
}
