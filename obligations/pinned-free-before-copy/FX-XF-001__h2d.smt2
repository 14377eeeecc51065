; fxverify obligation FX-XF-001
; policy: pinned-free-before-copy (corpus/ownership/fail/pinned-free-before-copy.fx)
; key: FX-XF-001:h2d
; edge 1 = h2d
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const n Int)
(declare-const out Int)
(assert (! (and (<= 0 n) (< n 8388609)) :named A_input_size))
(assert (! (= out n) :named A_worst_case_output))
(assert (! (> out 8388608) :named A_exceeds_destination))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
