; fxverify obligation FX-OWN-001
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-OWN-001:decode|rope1
; edge 2 = decode
; edge 1 = xfer
; device 0 = gpu0
; device 1 = gpu1
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const accessor Int)
(declare-const init_owner Int)
(declare-const dst_e1 Int)
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (<= f_1 s_2) :named A_hb_1_2))
(assert (! (= accessor 1) :named A_accessor))
(assert (! (= init_owner 0) :named A_init_owner))
(assert (! (= dst_e1 1) :named A_dst_e1))
(assert (! (not (or (or (and (not (<= f_1 s_2)) (= init_owner accessor)) (and (<= f_1 s_2) (= dst_e1 accessor))) false)) :named A_not_owner_nor_lessee))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
