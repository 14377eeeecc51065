; fxverify obligation FX-HOOK-001
; policy: persist-over-posted-no-flush (corpus/ordering/fail/persist-over-posted-no-flush.fx)
; key: FX-HOOK-001:spill:gpu0>gpu0>cxl0
; edge 0 = spill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const c0_gpu0 Bool)
(declare-const c0_cxl0 Bool)
(assert (! (and c0_gpu0 (not c0_cxl0) (= c0_gpu0 c0_cxl0)) :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
