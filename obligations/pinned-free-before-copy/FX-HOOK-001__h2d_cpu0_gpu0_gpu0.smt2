; fxverify obligation FX-HOOK-001
; policy: pinned-free-before-copy (corpus/ownership/fail/pinned-free-before-copy.fx)
; key: FX-HOOK-001:h2d:cpu0>gpu0>gpu0
; edge 1 = h2d
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const c0_cpu0 Bool)
(declare-const c0_gpu0 Bool)
(assert (! (and c0_cpu0 (not c0_gpu0) (= c0_gpu0 c0_cpu0)) :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
