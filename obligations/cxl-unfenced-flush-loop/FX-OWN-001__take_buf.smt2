; fxverify obligation FX-OWN-001
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-OWN-001:take|buf
; edge 4 = take
; edge 0 = fill
; device 0 = cpu0
; device 1 = cpu1
; device 2 = mem0
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_4 Int)
(declare-const f_4 Int)
(declare-const accessor Int)
(declare-const init_owner Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_4 0) (< s_4 f_4)) :named A_dur_4))
(assert (! (<= (+ f_0 2) s_4) :named A_hb_0_4))
(assert (! (= accessor 1) :named A_accessor))
(assert (! (= init_owner 0) :named A_init_owner))
(assert (! (not (or (and true (= init_owner accessor)) (<= f_0 s_4))) :named A_not_owner_nor_lessee))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
