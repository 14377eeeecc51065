; fxverify obligation FX-ORD-002
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-ORD-002:xfer#0|earlier
; edge 1 = xfer
; edge 0 = quant
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const k_a_0 Int)
(declare-const o_a_0 Int)
(declare-const addr_0 Int)
(declare-const k_b_0 Int)
(declare-const o_b_0 Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (<= f_0 s_1) :named A_hb_0_1))
(assert (! (and (and (and (<= 0 k_a_0) (< k_a_0 1)) (and (<= 0 o_a_0) (< o_a_0 41984)) (= addr_0 (+ (+ 1048576 (* 41984 k_a_0)) o_a_0))) (and (and (<= 0 k_b_0) (< k_b_0 1)) (and (<= 0 o_b_0) (< o_b_0 32768)) (= addr_0 (+ (+ 1048576 (* 32768 k_b_0)) o_b_0))) (and (< s_0 f_1) (< s_1 f_0))) :named A_some_pair_races))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
