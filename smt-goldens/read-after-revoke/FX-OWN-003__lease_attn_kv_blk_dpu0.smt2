; fxverify obligation FX-OWN-003
; policy: read-after-revoke (corpus/ownership/fail/read-after-revoke.fx)
; key: FX-OWN-003:lease:attn|kv_blk|dpu0
; edge 0 = attn
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (not (and true true)) :named A_lender_not_owner))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
