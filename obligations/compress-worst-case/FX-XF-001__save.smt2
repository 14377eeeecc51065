; fxverify obligation FX-XF-001
; policy: compress-worst-case (corpus/transforms/ok/compress-worst-case.fx)
; key: FX-XF-001:save
; edge 0 = save
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const n Int)
(declare-const out Int)
(assert (! (and (<= 0 n) (< n 4194305)) :named A_input_size))
(assert (! (= out (+ (+ n (div n 255)) 16)) :named A_worst_case_output))
(assert (! (> out 4211712) :named A_exceeds_destination))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
