; fxverify obligation FX-INIT-001
; policy: read-after-revoke (corpus/ownership/fail/read-after-revoke.fx)
; key: FX-INIT-001:resend#0
; edge 3 = resend
; edge 0 = attn
; edge 2 = reuse
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const s_3 Int)
(declare-const f_3 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (and (>= s_3 0) (< s_3 f_3)) :named A_dur_3))
(assert (! (<= f_0 s_2) :named A_hb_0_2))
(assert (! (<= f_2 s_3) :named A_hb_2_3))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 262144)) (= addr (+ (+ 536870912 (* 262144 k_u)) o_u))) :named A_read_byte))
(assert (! (or (not (and (<= 536870912 addr) (< addr 537133056))) (not (<= f_0 s_3))) :named A_not_written_by_0_0))
(assert (! (or (not (and (<= 536870912 addr) (< addr 537133056))) (not (<= f_2 s_3))) :named A_not_written_by_2_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
