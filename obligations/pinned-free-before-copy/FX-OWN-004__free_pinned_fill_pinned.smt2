; fxverify obligation FX-OWN-004
; policy: pinned-free-before-copy (corpus/ownership/fail/pinned-free-before-copy.fx)
; key: FX-OWN-004:free_pinned|fill|pinned
; edge 2 = free_pinned
; edge 0 = fill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (<= f_0 s_2) :named A_hb_0_2))
(assert (! (not (<= f_0 s_2)) :named A_use_not_before_release))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
