; fxverify obligation FX-ORD-001
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-ORD-001:policy
; edge 0 = quant
; edge 1 = xfer
; edge 2 = decode
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (<= f_0 s_1) :named A_hb_0_1))
(assert (! (<= f_1 s_2) :named A_hb_1_2))
; the obligation is proved when the answer is sat
(check-sat)
(exit)
