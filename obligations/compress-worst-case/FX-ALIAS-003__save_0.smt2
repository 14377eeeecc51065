; fxverify obligation FX-ALIAS-003
; policy: compress-worst-case (corpus/transforms/ok/compress-worst-case.fx)
; key: FX-ALIAS-003:save#0
; edge 0 = save
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 4194304)) (= addr (+ (+ 805306368 (* 4194304 k_a)) o_a))) :named A_byte_of_footprint))
(assert (! (not (and (<= 805306368 addr) (< addr 809500672))) :named A_outside_region))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
