; fxverify obligation FX-OWN-001
; policy: persist-over-posted-no-flush (corpus/ordering/fail/persist-over-posted-no-flush.fx)
; key: FX-OWN-001:spill|ckpt
; edge 0 = spill
; device 0 = gpu0
; device 1 = cxl0
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const accessor Int)
(declare-const init_owner Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (= accessor 0) :named A_accessor))
(assert (! (= init_owner 0) :named A_init_owner))
(assert (! (not (and true (= init_owner accessor))) :named A_not_owner_nor_lessee))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
