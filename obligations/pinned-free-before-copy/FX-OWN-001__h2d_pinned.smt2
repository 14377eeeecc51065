; fxverify obligation FX-OWN-001
; policy: pinned-free-before-copy (corpus/ownership/fail/pinned-free-before-copy.fx)
; key: FX-OWN-001:h2d|pinned
; edge 1 = h2d
; edge 0 = fill
; device 0 = gpu0
; device 1 = cpu0
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const accessor Int)
(declare-const init_owner Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (<= f_0 s_1) :named A_hb_0_1))
(assert (! (= accessor 0) :named A_accessor))
(assert (! (= init_owner 1) :named A_init_owner))
(assert (! (not (or (and true (= init_owner accessor)) (<= f_0 s_1))) :named A_not_owner_nor_lessee))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
