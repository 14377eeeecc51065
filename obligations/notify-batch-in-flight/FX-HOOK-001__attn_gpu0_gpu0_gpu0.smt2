; fxverify obligation FX-HOOK-001
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-HOOK-001:attn:gpu0>gpu0>gpu0
; edge 5 = attn
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(assert (! false :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
