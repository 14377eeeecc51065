; fxverify obligation FX-XF-003
; policy: kv-offload-unordered (corpus/ordering/fail/kv-offload-unordered.fx)
; key: FX-XF-003:offload
; edge 1 = offload
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const lhs_0 Int)
(declare-const rhs_0 Int)
(assert (! (= lhs_0 0) :named A_lhs_0))
(assert (! (= rhs_0 0) :named A_rhs_0))
(assert (! (not (= lhs_0 rhs_0)) :named A_some_check_fails))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
