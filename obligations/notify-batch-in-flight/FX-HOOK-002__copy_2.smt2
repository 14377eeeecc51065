; fxverify obligation FX-HOOK-002
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-HOOK-002:copy[2]
; edge 2 = copy[2]
; hook 0 = dma_done
; hook 1 = tx
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const hook Int)
(assert (! (= hook 0) :named A_used_hook))
(assert (! (not (or (= hook 0) (= hook 1))) :named A_undeclared))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
