; fxverify obligation FX-HOOK-001
; policy: read-after-revoke (corpus/ownership/fail/read-after-revoke.fx)
; key: FX-HOOK-001:reuse:gpu0>gpu0>gpu0
; edge 2 = reuse
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(assert (! false :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
