; fxverify obligation FX-ALIAS-003
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-ALIAS-003:decode#0
; edge 2 = decode
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 41984)) (= addr (+ (+ 2097152 (* 41984 k_a)) o_a))) :named A_byte_of_footprint))
(assert (! (not (and (<= 2097152 addr) (< addr 2139136))) :named A_outside_region))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
