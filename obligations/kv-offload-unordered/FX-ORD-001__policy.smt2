; fxverify obligation FX-ORD-001
; policy: kv-offload-unordered (corpus/ordering/fail/kv-offload-unordered.fx)
; key: FX-ORD-001:policy
; edge 0 = attn
; edge 1 = offload
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
; the obligation is proved when the answer is sat
(check-sat)
(exit)
