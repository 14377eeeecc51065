; fxverify obligation FX-INIT-001
; policy: persist-over-posted-no-flush (corpus/ordering/fail/persist-over-posted-no-flush.fx)
; key: FX-INIT-001:spill#0
; edge 0 = spill
; init 0 = kv [0x10000000, 0x10200000)
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const k_u Int)
(declare-const o_u Int)
(declare-const addr Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (and (<= 0 k_u) (< k_u 1)) (and (<= 0 o_u) (< o_u 2097152)) (= addr (+ (+ 268435456 (* 2097152 k_u)) o_u))) :named A_read_byte))
(assert (! (not (and (<= 268435456 addr) (< addr 270532608))) :named A_not_init_0))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
