; fxverify obligation FX-ORD-006
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-ORD-006:done|copy[1]
; edge 1 = copy[1]
; edge 4 = done
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_4 Int)
(declare-const f_4 Int)
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_4 0) (< s_4 f_4)) :named A_dur_4))
(assert (! (< s_4 f_1) :named A_in_flight))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
