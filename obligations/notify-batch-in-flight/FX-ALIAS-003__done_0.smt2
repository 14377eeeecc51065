; fxverify obligation FX-ALIAS-003
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-ALIAS-003:done#0
; edge 4 = done
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 16)) (= addr (+ (+ 68736253952 (* 16 k_a)) o_a))) :named A_byte_of_footprint))
(assert (! (not (and (<= 68736253952 addr) (< addr 68736258048))) :named A_outside_region))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
