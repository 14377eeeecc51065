; fxverify obligation FX-HOOK-001
; policy: kv-offload-unordered (corpus/ordering/fail/kv-offload-unordered.fx)
; key: FX-HOOK-001:offload:gpu0>gpu0>cpu0
; edge 1 = offload
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const c0_gpu0 Bool)
(declare-const c0_cpu0 Bool)
(assert (! (and c0_gpu0 (not c0_cpu0) (= c0_gpu0 c0_cpu0)) :named A_cut))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
