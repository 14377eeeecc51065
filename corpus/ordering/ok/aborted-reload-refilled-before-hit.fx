# Fixed twin of fail/aborted-reload-tears-cached-block.fx: the abort invalidates the block, which
# is filled again (the KV recomputed) before the next hit reads it. The refill is a completed write
# after the cancel completed, so every byte the hit reads is its data (FX-INIT-001).
policy "aborted-reload-refilled-before-hit"

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
  edge refill: write blk by dpu0.run after abort
  edge hit: read blk by dpu0.tx after refill
}
