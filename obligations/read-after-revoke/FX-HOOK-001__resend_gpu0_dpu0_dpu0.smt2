; fxverify obligation FX-HOOK-001
; policy: read-after-revoke (corpus/ownership/fail/read-after-revoke.fx)
; key: FX-HOOK-001:resend:gpu0>dpu0>dpu0
; edge 3 = resend
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const c0_gpu0 Bool)
(declare-const c0_dpu0 Bool)
(assert (! (and c0_gpu0 (not c0_dpu0) (= c0_gpu0 c0_dpu0)) :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
