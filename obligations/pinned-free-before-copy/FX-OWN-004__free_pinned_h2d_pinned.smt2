; fxverify obligation FX-OWN-004
; policy: pinned-free-before-copy (corpus/ownership/fail/pinned-free-before-copy.fx)
; key: FX-OWN-004:free_pinned|h2d|pinned
; edge 2 = free_pinned
; edge 1 = h2d
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (not (<= f_1 s_2)) :named A_use_not_before_release))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
