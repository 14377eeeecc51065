; fxverify obligation FX-INIT-001
; policy: compress-worst-case (corpus/transforms/ok/compress-worst-case.fx)
; key: FX-INIT-001:save#0
; edge 0 = save
; init 0 = act [0x30000000, 0x30400000)
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 4194304)) (= addr (+ (+ 805306368 (* 4194304 k_u)) o_u))) :named A_read_byte))
(assert (! (not (and (<= 805306368 addr) (< addr 809500672))) :named A_not_init_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
