; fxverify obligation FX-OWN-001
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-OWN-001:fill|buf
; edge 0 = fill
; device 0 = cpu0
; device 1 = cpu1
; device 2 = mem0
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const accessor Int)
(declare-const init_owner Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (= accessor 0) :named A_accessor))
(assert (! (= init_owner 0) :named A_init_owner))
(assert (! (not (and true (= init_owner accessor))) :named A_not_owner_nor_lessee))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
