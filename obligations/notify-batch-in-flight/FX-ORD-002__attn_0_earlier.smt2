; fxverify obligation FX-ORD-002
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-ORD-002:attn#0|earlier
; edge 5 = attn
; edge 0 = copy[0]
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_4 Int)
(declare-const f_4 Int)
(declare-const s_5 Int)
(declare-const f_5 Int)
(declare-const k_a_0 Int)
(declare-const o_a_0 Int)
(declare-const addr_0 Int)
(declare-const k_b_0 Int)
(declare-const o_b_0 Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_4 0) (< s_4 f_4)) :named A_dur_4))
(assert (! (and (>= s_5 0) (< s_5 f_5)) :named A_dur_5))
(assert (! (<= f_0 s_4) :named A_hb_0_4))
(assert (! (<= f_4 s_5) :named A_hb_4_5))
(assert (! (and (and (and (<= 0 k_a_0) (< k_a_0 1)) (and (<= 0 o_a_0) (< o_a_0 65536)) (= addr_0 (+ (+ 1073741824 (* 65536 k_a_0)) o_a_0))) (and (and (<= 0 k_b_0) (< k_b_0 1)) (and (<= 0 o_b_0) (< o_b_0 262144)) (= addr_0 (+ (+ 1073741824 (* 262144 k_b_0)) o_b_0))) (and (< s_0 f_5) (< s_5 f_0))) :named A_some_pair_races))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
