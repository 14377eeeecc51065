; fxverify obligation FX-XF-001
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-XF-001:xfer
; edge 1 = xfer
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const n Int)
(declare-const out Int)
(assert (! (and (<= 0 n) (< n 32769)) :named A_input_size))
(assert (! (= out n) :named A_worst_case_output))
(assert (! (> out 32768) :named A_exceeds_destination))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
