; fxverify obligation FX-ORD-005
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-ORD-005:fill#0|take#0
; edge 0 = fill
; edge 4 = take
; edge 1 = flush
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_4 Int)
(declare-const f_4 Int)
(declare-const k_w Int)
(declare-const o_w Int)
(declare-const addr Int)
(declare-const k_r Int)
(declare-const o_r Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_4 0) (< s_4 f_4)) :named A_dur_4))
(assert (! (<= f_0 s_1) :named A_hb_0_1))
(assert (! (<= (+ f_0 2) s_4) :named A_hb_0_4))
(assert (! (and (and (<= 0 k_w) (< k_w 1)) (and (<= 0 o_w) (< o_w 65536)) (= addr (+ (+ 549755813888 (* 65536 k_w)) o_w))) :named A_shared_byte_w))
(assert (! (and (and (<= 0 k_r) (< k_r 1)) (and (<= 0 o_r) (< o_r 65536)) (= addr (+ (+ 549755813888 (* 65536 k_r)) o_r))) :named A_shared_byte_r))
(assert (! (<= f_0 s_4) :named A_read_after_write))
(assert (! (not (and (and (and (<= 549755813888 addr) (< addr 549755879424)) (<= f_0 s_1)) (and (and (<= 549755813888 addr) (< addr 549755879424)) true) (<= f_1 s_4))) :named A_stale_1_0_4_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
