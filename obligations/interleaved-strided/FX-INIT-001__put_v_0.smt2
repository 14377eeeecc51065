; fxverify obligation FX-INIT-001
; policy: interleaved-strided (corpus/alias/ok/interleaved-strided.fx)
; key: FX-INIT-001:put_v#0
; edge 1 = put_v
; init 0 = v_new [0x21000000, 0x21008000)
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 32768)) (= addr (+ (+ 553648128 (* 32768 k_u)) o_u))) :named A_read_byte))
(assert (! (not (and (<= 553648128 addr) (< addr 553680896))) :named A_not_init_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
