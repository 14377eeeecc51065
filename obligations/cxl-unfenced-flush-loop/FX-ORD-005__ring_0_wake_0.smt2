; fxverify obligation FX-ORD-005
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-ORD-005:ring#0|wake#0
; edge 2 = ring
; edge 3 = wake
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const s_3 Int)
(declare-const f_3 Int)
(declare-const k_w Int)
(declare-const o_w Int)
(declare-const addr Int)
(declare-const k_r Int)
(declare-const o_r Int)
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (and (>= s_3 0) (< s_3 f_3)) :named A_dur_3))
(assert (! (<= f_2 s_3) :named A_hb_2_3))
(assert (! (and (and (<= 0 k_w) (< k_w 1)) (and (<= 0 o_w) (< o_w 64)) (= addr (+ (+ 549755879424 (* 64 k_w)) o_w))) :named A_shared_byte_w))
(assert (! (and (and (<= 0 k_r) (< k_r 1)) (and (<= 0 o_r) (< o_r 64)) (= addr (+ (+ 549755879424 (* 64 k_r)) o_r))) :named A_shared_byte_r))
(assert (! (<= f_2 s_3) :named A_read_after_write))
(assert (! (not (and (and (and (<= 549755879424 addr) (< addr 549755879488)) true) (and (and (<= 549755879424 addr) (< addr 549755879488)) true) (<= f_2 s_3))) :named A_stale_2_0_3_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
