; fxverify obligation FX-ORD-006
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-ORD-006:done|copy[3]
; edge 3 = copy[3]
; edge 4 = done
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_3 Int)
(declare-const f_3 Int)
(declare-const s_4 Int)
(declare-const f_4 Int)
(assert (! (and (>= s_3 0) (< s_3 f_3)) :named A_dur_3))
(assert (! (and (>= s_4 0) (< s_4 f_4)) :named A_dur_4))
(assert (! (< s_4 f_3) :named A_in_flight))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
