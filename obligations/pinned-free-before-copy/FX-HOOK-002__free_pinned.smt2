; fxverify obligation FX-HOOK-002
; policy: pinned-free-before-copy (corpus/ownership/fail/pinned-free-before-copy.fx)
; key: FX-HOOK-002:free_pinned
; edge 2 = free_pinned
; hook 0 = free
; hook 1 = launch
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const hook Int)
(assert (! (= hook 0) :named A_used_hook))
(assert (! (not (or (= hook 1) (= hook 0))) :named A_undeclared))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
