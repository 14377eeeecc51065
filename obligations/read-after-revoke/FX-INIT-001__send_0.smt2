; fxverify obligation FX-INIT-001
; policy: read-after-revoke (corpus/ownership/fail/read-after-revoke.fx)
; key: FX-INIT-001:send#0
; edge 1 = send
; edge 0 = attn
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
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 262144)) (= addr (+ (+ 536870912 (* 262144 k_u)) o_u))) :named A_read_byte))
(assert (! (or (not (and (<= 536870912 addr) (< addr 537133056))) (not (<= f_0 s_1))) :named A_not_written_by_0_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
