; fxverify obligation FX-ORD-001
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-ORD-001:policy
; edge 0 = copy[0]
; edge 1 = copy[1]
; edge 2 = copy[2]
; edge 3 = copy[3]
; edge 4 = done
; edge 5 = attn
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const s_3 Int)
(declare-const f_3 Int)
(declare-const s_4 Int)
(declare-const f_4 Int)
(declare-const s_5 Int)
(declare-const f_5 Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (and (>= s_3 0) (< s_3 f_3)) :named A_dur_3))
(assert (! (and (>= s_4 0) (< s_4 f_4)) :named A_dur_4))
(assert (! (and (>= s_5 0) (< s_5 f_5)) :named A_dur_5))
(assert (! (<= f_0 s_4) :named A_hb_0_4))
(assert (! (<= f_4 s_5) :named A_hb_4_5))
; the obligation is proved when the answer is sat
(check-sat)
(exit)
