; fxverify obligation FX-INIT-001
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-INIT-001:copy[3]#0
; edge 3 = copy[3]
; init 0 = staged [0x1000000000, 0x1000040000)
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_3 Int)
(declare-const f_3 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_3 0) (< s_3 f_3)) :named A_dur_3))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 65536)) (= addr (+ (+ 68719673344 (* 65536 k_u)) o_u))) :named A_read_byte))
(assert (! (not (and (<= 68719476736 addr) (< addr 68719738880))) :named A_not_init_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
