; fxverify obligation FX-HOOK-001
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-HOOK-001:copy[0]:dpu0>dpu0>gpu0
; edge 0 = copy[0]
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const c0_dpu0 Bool)
(declare-const c0_gpu0 Bool)
(assert (! (and c0_dpu0 (not c0_gpu0) (= c0_dpu0 c0_gpu0)) :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
