; fxverify obligation FX-ORD-002
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-ORD-002:quant#0|xfer#0
; edge 0 = quant
; edge 1 = xfer
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(declare-const k_b Int)
(declare-const o_b Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (<= f_0 s_1) :named A_hb_0_1))
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 41984)) (= addr (+ (+ 1048576 (* 41984 k_a)) o_a))) :named A_shared_byte_a))
(assert (! (and (and (<= 0 k_b) (< k_b 1)) (and (<= 0 o_b) (< o_b 32768)) (= addr (+ (+ 1048576 (* 32768 k_b)) o_b))) :named A_shared_byte_b))
(assert (! (and (< s_0 f_1) (< s_1 f_0)) :named A_overlap))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
