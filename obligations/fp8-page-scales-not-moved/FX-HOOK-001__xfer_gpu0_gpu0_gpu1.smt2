; fxverify obligation FX-HOOK-001
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-HOOK-001:xfer:gpu0>gpu0>gpu1
; edge 1 = xfer
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const c0_gpu0 Bool)
(declare-const c0_gpu1 Bool)
(assert (! (and c0_gpu0 (not c0_gpu1) (= c0_gpu0 c0_gpu1)) :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
