; fxverify obligation FX-ALIAS-003
; policy: pinned-free-before-copy (corpus/ownership/fail/pinned-free-before-copy.fx)
; key: FX-ALIAS-003:fill#0
; edge 0 = fill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 8388608)) (= addr (+ (+ 4831838208 (* 8388608 k_a)) o_a))) :named A_byte_of_footprint))
(assert (! (not (and (<= 4831838208 addr) (< addr 4840226816))) :named A_outside_region))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
