; fxverify obligation FX-ALIAS-003
; policy: interleaved-strided (corpus/alias/ok/interleaved-strided.fx)
; key: FX-ALIAS-003:put_v#1
; edge 1 = put_v
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(assert (! (and (and (<= 0 k_a) (< k_a 512)) (and (<= 0 o_a) (< o_a 64)) (= addr (+ (+ 268435520 (* 128 k_a)) o_a))) :named A_byte_of_footprint))
(assert (! (not (and (<= 268435456 addr) (< addr 268500992))) :named A_outside_region))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
