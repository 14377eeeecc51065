; fxverify obligation FX-ALIAS-003
; policy: read-after-revoke (corpus/ownership/fail/read-after-revoke.fx)
; key: FX-ALIAS-003:resend#0
; edge 3 = resend
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 262144)) (= addr (+ (+ 536870912 (* 262144 k_a)) o_a))) :named A_byte_of_footprint))
(assert (! (not (and (<= 536870912 addr) (< addr 537133056))) :named A_outside_region))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
