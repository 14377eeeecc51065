; fxverify obligation FX-HOOK-002
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-HOOK-002:decode
; edge 2 = decode
; hook 0 = launch
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const hook Int)
(assert (! (= hook 0) :named A_used_hook))
(assert (! (not (= hook 0)) :named A_undeclared))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
