; fxverify obligation FX-HOOK-002
; policy: read-after-revoke (corpus/ownership/fail/read-after-revoke.fx)
; key: FX-HOOK-002:send
; edge 1 = send
; hook 0 = dma_done
; hook 1 = rx
; hook 2 = tx
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const hook Int)
(assert (! (= hook 2) :named A_used_hook))
(assert (! (not (or (= hook 1) (= hook 2) (= hook 0))) :named A_undeclared))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
