; fxverify obligation FX-ORD-002
; policy: read-after-revoke (corpus/ownership/fail/read-after-revoke.fx)
; key: FX-ORD-002:reuse#0|earlier
; edge 2 = reuse
; edge 0 = attn
; edge 1 = send
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const k_a_0 Int)
(declare-const o_a_0 Int)
(declare-const addr_0 Int)
(declare-const k_b_0 Int)
(declare-const o_b_0 Int)
(declare-const k_a_1 Int)
(declare-const o_a_1 Int)
(declare-const addr_1 Int)
(declare-const k_b_1 Int)
(declare-const o_b_1 Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (<= f_0 s_1) :named A_hb_0_1))
(assert (! (<= f_1 s_2) :named A_hb_1_2))
(assert (! (or (and (and (and (<= 0 k_a_0) (< k_a_0 1)) (and (<= 0 o_a_0) (< o_a_0 262144)) (= addr_0 (+ (+ 536870912 (* 262144 k_a_0)) o_a_0))) (and (and (<= 0 k_b_0) (< k_b_0 1)) (and (<= 0 o_b_0) (< o_b_0 262144)) (= addr_0 (+ (+ 536870912 (* 262144 k_b_0)) o_b_0))) (and (< s_0 f_2) (< s_2 f_0))) (and (and (and (<= 0 k_a_1) (< k_a_1 1)) (and (<= 0 o_a_1) (< o_a_1 262144)) (= addr_1 (+ (+ 536870912 (* 262144 k_a_1)) o_a_1))) (and (and (<= 0 k_b_1) (< k_b_1 1)) (and (<= 0 o_b_1) (< o_b_1 262144)) (= addr_1 (+ (+ 536870912 (* 262144 k_b_1)) o_b_1))) (and (< s_1 f_2) (< s_2 f_1)))) :named A_some_pair_races))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
