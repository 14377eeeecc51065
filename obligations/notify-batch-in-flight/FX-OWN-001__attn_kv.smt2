; fxverify obligation FX-OWN-001
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-OWN-001:attn|kv
; edge 5 = attn
; edge 4 = done
; device 0 = gpu0
; device 1 = dpu0
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_4 Int)
(declare-const f_4 Int)
(declare-const s_5 Int)
(declare-const f_5 Int)
(declare-const accessor Int)
(declare-const init_owner Int)
(assert (! (and (>= s_4 0) (< s_4 f_4)) :named A_dur_4))
(assert (! (and (>= s_5 0) (< s_5 f_5)) :named A_dur_5))
(assert (! (<= f_4 s_5) :named A_hb_4_5))
(assert (! (= accessor 0) :named A_accessor))
(assert (! (= init_owner 1) :named A_init_owner))
(assert (! (not (or (and true (= init_owner accessor)) (<= f_4 s_5))) :named A_not_owner_nor_lessee))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
