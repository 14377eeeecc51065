; fxverify obligation FX-ALIAS-001
; policy: interleaved-strided (corpus/alias/ok/interleaved-strided.fx)
; key: FX-ALIAS-001:put_k#1|put_v#1
; edge 0 = put_k
; edge 1 = put_v
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(declare-const k_b Int)
(declare-const o_b Int)
(assert (! (and (and (<= 0 k_a) (< k_a 512)) (and (<= 0 o_a) (< o_a 64)) (= addr (+ (+ 268435456 (* 128 k_a)) o_a))) :named A_byte_in_first))
(assert (! (and (and (<= 0 k_b) (< k_b 512)) (and (<= 0 o_b) (< o_b 64)) (= addr (+ (+ 268435520 (* 128 k_b)) o_b))) :named A_byte_in_second))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
