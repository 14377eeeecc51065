; fxverify obligation FX-OWN-001
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-OWN-001:copy[1]|staged
; edge 1 = copy[1]
; device 0 = gpu0
; device 1 = dpu0
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const accessor Int)
(declare-const init_owner Int)
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (= accessor 1) :named A_accessor))
(assert (! (= init_owner 1) :named A_init_owner))
(assert (! (not (or (and true (= init_owner accessor)) false)) :named A_not_owner_nor_lessee))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
