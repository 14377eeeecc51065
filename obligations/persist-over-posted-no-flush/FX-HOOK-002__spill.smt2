; fxverify obligation FX-HOOK-002
; policy: persist-over-posted-no-flush (corpus/ordering/fail/persist-over-posted-no-flush.fx)
; key: FX-HOOK-002:spill
; edge 0 = spill
; hook 0 = copy_done
; hook 1 = launch
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const hook Int)
(assert (! (= hook 0) :named A_used_hook))
(assert (! (not (or (= hook 1) (= hook 0))) :named A_undeclared))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
