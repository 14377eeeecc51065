; fxverify obligation FX-HOOK-002
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-HOOK-002:flush
; edge 1 = flush
; hook 0 = run
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const hook Int)
(assert (! (= hook 0) :named A_used_hook))
(assert (! (not (= hook 0)) :named A_undeclared))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
