; fxverify obligation FX-ALIAS-003
; policy: persist-over-posted-no-flush (corpus/ordering/fail/persist-over-posted-no-flush.fx)
; key: FX-ALIAS-003:spill#1
; edge 0 = spill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 2097152)) (= addr (+ (+ 550292684800 (* 2097152 k_a)) o_a))) :named A_byte_of_footprint))
(assert (! (not (and (<= 550292684800 addr) (< addr 550294781952))) :named A_outside_region))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
