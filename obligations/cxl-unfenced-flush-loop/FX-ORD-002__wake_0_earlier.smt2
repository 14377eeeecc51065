; fxverify obligation FX-ORD-002
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-ORD-002:wake#0|earlier
; edge 3 = wake
; edge 2 = ring
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const s_3 Int)
(declare-const f_3 Int)
(declare-const k_a_0 Int)
(declare-const o_a_0 Int)
(declare-const addr_0 Int)
(declare-const k_b_0 Int)
(declare-const o_b_0 Int)
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (and (>= s_3 0) (< s_3 f_3)) :named A_dur_3))
(assert (! (<= f_2 s_3) :named A_hb_2_3))
(assert (! (and (and (and (<= 0 k_a_0) (< k_a_0 1)) (and (<= 0 o_a_0) (< o_a_0 64)) (= addr_0 (+ (+ 549755879424 (* 64 k_a_0)) o_a_0))) (and (and (<= 0 k_b_0) (< k_b_0 1)) (and (<= 0 o_b_0) (< o_b_0 64)) (= addr_0 (+ (+ 549755879424 (* 64 k_b_0)) o_b_0))) (and (< s_2 f_3) (< s_3 f_2))) :named A_some_pair_races))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
