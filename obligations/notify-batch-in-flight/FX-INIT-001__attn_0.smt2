; fxverify obligation FX-INIT-001
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-INIT-001:attn#0
; edge 5 = attn
; edge 0 = copy[0]
; edge 1 = copy[1]
; edge 2 = copy[2]
; edge 3 = copy[3]
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const s_3 Int)
(declare-const f_3 Int)
(declare-const s_5 Int)
(declare-const f_5 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (and (>= s_3 0) (< s_3 f_3)) :named A_dur_3))
(assert (! (and (>= s_5 0) (< s_5 f_5)) :named A_dur_5))
(assert (! (<= f_0 s_5) :named A_hb_0_5))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 262144)) (= addr (+ (+ 1073741824 (* 262144 k_u)) o_u))) :named A_read_byte))
(assert (! (or (not (and (<= 1073741824 addr) (< addr 1073807360))) (not (<= f_0 s_5))) :named A_not_written_by_0_1))
(assert (! (or (not (and (<= 1073807360 addr) (< addr 1073872896))) (not (<= f_1 s_5))) :named A_not_written_by_1_1))
(assert (! (or (not (and (<= 1073872896 addr) (< addr 1073938432))) (not (<= f_2 s_5))) :named A_not_written_by_2_1))
(assert (! (or (not (and (<= 1073938432 addr) (< addr 1074003968))) (not (<= f_3 s_5))) :named A_not_written_by_3_1))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
