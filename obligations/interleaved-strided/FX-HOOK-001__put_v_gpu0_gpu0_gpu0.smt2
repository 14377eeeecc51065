; fxverify obligation FX-HOOK-001
; policy: interleaved-strided (corpus/alias/ok/interleaved-strided.fx)
; key: FX-HOOK-001:put_v:gpu0>gpu0>gpu0
; edge 1 = put_v
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(assert (! false :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
