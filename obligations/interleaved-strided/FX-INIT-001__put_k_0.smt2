; fxverify obligation FX-INIT-001
; policy: interleaved-strided (corpus/alias/ok/interleaved-strided.fx)
; key: FX-INIT-001:put_k#0
; edge 0 = put_k
; init 0 = k_new [0x20000000, 0x20008000)
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 32768)) (= addr (+ (+ 536870912 (* 32768 k_u)) o_u))) :named A_read_byte))
(assert (! (not (and (<= 536870912 addr) (< addr 536903680))) :named A_not_init_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
