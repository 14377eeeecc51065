; fxverify obligation FX-INIT-001
; policy: cxl-unfenced-flush-loop (corpus/ordering/fail/cxl-unfenced-flush-loop.fx)
; key: FX-INIT-001:wake#0
; edge 3 = wake
; edge 2 = ring
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const s_3 Int)
(declare-const f_3 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (and (>= s_3 0) (< s_3 f_3)) :named A_dur_3))
(assert (! (<= f_2 s_3) :named A_hb_2_3))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 64)) (= addr (+ (+ 549755879424 (* 64 k_u)) o_u))) :named A_read_byte))
(assert (! (or (not (and (<= 549755879424 addr) (< addr 549755879488))) (not (<= f_2 s_3))) :named A_not_written_by_2_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
