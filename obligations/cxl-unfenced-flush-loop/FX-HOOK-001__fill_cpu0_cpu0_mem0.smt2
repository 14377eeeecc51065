; fxverify obligation FX-HOOK-001
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-HOOK-001:fill:cpu0>cpu0>mem0
; edge 0 = fill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const c0_cpu0 Bool)
(declare-const c0_mem0 Bool)
(declare-const c0_cpu1 Bool)
(assert (! (and c0_cpu0 (not c0_mem0) (= c0_cpu0 c0_mem0) (= c0_cpu1 c0_mem0)) :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
