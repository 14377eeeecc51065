; fxverify obligation FX-ALIAS-003
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-ALIAS-003:fill#0
; edge 0 = fill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 65536)) (= addr (+ (+ 549755813888 (* 65536 k_a)) o_a))) :named A_byte_of_footprint))
(assert (! (not (and (<= 549755813888 addr) (< addr 549755879424))) :named A_outside_region))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
