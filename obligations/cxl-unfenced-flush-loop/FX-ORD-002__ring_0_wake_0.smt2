; fxverify obligation FX-ORD-002
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-ORD-002:ring#0|wake#0
; edge 2 = ring
; edge 3 = wake
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const s_3 Int)
(declare-const f_3 Int)
(declare-const k_a Int)
(declare-const o_a Int)
(declare-const addr Int)
(declare-const k_b Int)
(declare-const o_b Int)
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (and (>= s_3 0) (< s_3 f_3)) :named A_dur_3))
(assert (! (<= f_2 s_3) :named A_hb_2_3))
(assert (! (and (and (<= 0 k_a) (< k_a 1)) (and (<= 0 o_a) (< o_a 64)) (= addr (+ (+ 549755879424 (* 64 k_a)) o_a))) :named A_shared_byte_a))
(assert (! (and (and (<= 0 k_b) (< k_b 1)) (and (<= 0 o_b) (< o_b 64)) (= addr (+ (+ 549755879424 (* 64 k_b)) o_b))) :named A_shared_byte_b))
(assert (! (and (< s_2 f_3) (< s_3 f_2)) :named A_overlap))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
