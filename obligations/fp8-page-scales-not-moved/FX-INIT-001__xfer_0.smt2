; fxverify obligation FX-INIT-001
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-INIT-001:xfer#0
; edge 1 = xfer
; edge 0 = quant
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (<= f_0 s_1) :named A_hb_0_1))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 32768)) (= addr (+ (+ 1048576 (* 32768 k_u)) o_u))) :named A_read_byte))
(assert (! (or (not (and (<= 1048576 addr) (< addr 1090560))) (not (<= f_0 s_1))) :named A_not_written_by_0_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
