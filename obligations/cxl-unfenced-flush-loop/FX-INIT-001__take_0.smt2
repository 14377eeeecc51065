; fxverify obligation FX-INIT-001
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-INIT-001:take#0
; edge 4 = take
; edge 0 = fill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_4 Int)
(declare-const f_4 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_4 0) (< s_4 f_4)) :named A_dur_4))
(assert (! (<= f_0 s_4) :named A_hb_0_4))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 65536)) (= addr (+ (+ 549755813888 (* 65536 k_u)) o_u))) :named A_read_byte))
(assert (! (or (not (and (<= 549755813888 addr) (< addr 549755879424))) (not (<= f_0 s_4))) :named A_not_written_by_0_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
