; fxverify obligation FX-HOOK-001
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-HOOK-001:quant:gpu0>gpu0>gpu0
; edge 0 = quant
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(assert (! false :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
