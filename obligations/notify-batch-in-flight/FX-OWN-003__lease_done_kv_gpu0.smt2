; fxverify obligation FX-OWN-003
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-OWN-003:lease:done|kv|gpu0
; edge 4 = done
; device 0 = gpu0
; device 1 = dpu0
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_4 Int)
(declare-const f_4 Int)
(declare-const lender Int)
(declare-const init_owner Int)
(assert (! (and (>= s_4 0) (< s_4 f_4)) :named A_dur_4))
(assert (! (= lender 1) :named A_lender))
(assert (! (= init_owner 1) :named A_init_owner))
(assert (! (not (and true (= init_owner lender))) :named A_lender_not_owner))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
