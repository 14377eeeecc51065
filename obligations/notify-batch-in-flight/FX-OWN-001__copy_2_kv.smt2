; fxverify obligation FX-OWN-001
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-OWN-001:copy[2]|kv
; edge 2 = copy[2]
; device 0 = gpu0
; device 1 = dpu0
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const accessor Int)
(declare-const init_owner Int)
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (= accessor 1) :named A_accessor))
(assert (! (= init_owner 1) :named A_init_owner))
(assert (! (not (and true (= init_owner accessor))) :named A_not_owner_nor_lessee))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
