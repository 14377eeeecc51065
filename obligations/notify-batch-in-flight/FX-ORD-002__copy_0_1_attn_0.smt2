; fxverify obligation FX-ORD-002
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-ORD-002:copy[0]#1|attn#0
; edge 0 = copy[0]
; edge 5 = attn
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_4 Int)
(declare-const f_4 Int)
(declare-const s_5 Int)
(declare-const f_5 Int)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(declare-const k_b Int)
(declare-const o_b Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_4 0) (< s_4 f_4)) :named A_dur_4))
(assert (! (and (>= s_5 0) (< s_5 f_5)) :named A_dur_5))
(assert (! (<= f_0 s_4) :named A_hb_0_4))
(assert (! (<= f_4 s_5) :named A_hb_4_5))
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 65536)) (= addr (+ (+ 1073741824 (* 65536 k_a)) o_a))) :named A_shared_byte_a))
(assert (! (and (and (<= 0 k_b) (< k_b 1)) (and (<= 0 o_b) (< o_b 262144)) (= addr (+ (+ 1073741824 (* 262144 k_b)) o_b))) :named A_shared_byte_b))
(assert (! (and (< s_0 f_5) (< s_5 f_0)) :named A_overlap))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
