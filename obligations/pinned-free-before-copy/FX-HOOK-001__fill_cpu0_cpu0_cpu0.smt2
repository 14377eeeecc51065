; fxverify obligation FX-HOOK-001
; policy: pinned-free-before-copy (corpus/ownership/fail/pinned-free-before-copy.fx)
; key: FX-HOOK-001:fill:cpu0>cpu0>cpu0
; edge 0 = fill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(assert (! false :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
