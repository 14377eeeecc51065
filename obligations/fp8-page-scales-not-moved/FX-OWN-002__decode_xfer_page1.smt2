; fxverify obligation FX-OWN-002
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-OWN-002:decode|xfer|page1
; edge 2 = decode
; edge 1 = xfer
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (<= f_1 s_2) :named A_hb_1_2))
(assert (! (and (< s_2 f_1) (< s_1 f_2)) :named A_overlaps_handoff))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
