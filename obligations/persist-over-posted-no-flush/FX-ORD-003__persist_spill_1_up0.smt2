; fxverify obligation FX-ORD-003
; policy: persist-over-posted-no-flush (corpus/ordering/fail/persist-over-posted-no-flush.fx)
; key: FX-ORD-003:persist:spill#1|up0
; edge 0 = spill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
