; fxverify obligation FX-XF-001
; policy: persist-over-posted-no-flush (corpus/ordering/fail/persist-over-posted-no-flush.fx)
; key: FX-XF-001:spill
; edge 0 = spill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const n Int)
(declare-const out Int)
(assert (! (and (<= 0 n) (< n 2097153)) :named A_input_size))
(assert (! (= out n) :named A_worst_case_output))
(assert (! (> out 2097152) :named A_exceeds_destination))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
