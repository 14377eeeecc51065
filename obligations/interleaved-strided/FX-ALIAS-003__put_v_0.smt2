; fxverify obligation FX-ALIAS-003
; policy: interleaved-strided (corpus/alias/ok/interleaved-strided.fx)
; key: FX-ALIAS-003:put_v#0
; edge 1 = put_v
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 32768)) (= addr (+ (+ 553648128 (* 32768 k_a)) o_a))) :named A_byte_of_footprint))
(assert (! (not (and (<= 553648128 addr) (< addr 553680896))) :named A_outside_region))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
