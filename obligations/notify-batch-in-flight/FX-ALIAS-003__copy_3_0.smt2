; fxverify obligation FX-ALIAS-003
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-ALIAS-003:copy[3]#0
; edge 3 = copy[3]
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 65536)) (= addr (+ (+ 68719673344 (* 65536 k_a)) o_a))) :named A_byte_of_footprint))
(assert (! (not (and (<= 68719476736 addr) (< addr 68719738880))) :named A_outside_region))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
