; fxverify obligation FX-INIT-001
; policy: fp8-page-scales-not-moved (corpus/ordering/fail/fp8-page-scales-not-moved.fx)
; key: FX-INIT-001:decode#0
; edge 2 = decode
; edge 1 = xfer
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (<= f_1 s_2) :named A_hb_1_2))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 41984)) (= addr (+ (+ 2097152 (* 41984 k_u)) o_u))) :named A_read_byte))
(assert (! (or (not (and (<= 2097152 addr) (< addr 2129920))) (not (<= f_1 s_2))) :named A_not_written_by_1_1))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
