; fxverify obligation FX-XF-001
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-XF-001:copy[0]
; edge 0 = copy[0]
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const n Int)
(declare-const out Int)
(assert (! (and (<= 0 n) (< n 65537)) :named A_input_size))
(assert (! (= out n) :named A_worst_case_output))
(assert (! (> out 65536) :named A_exceeds_destination))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
