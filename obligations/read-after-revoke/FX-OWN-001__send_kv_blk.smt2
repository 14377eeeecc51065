; fxverify obligation FX-OWN-001
; policy: read-after-revoke (corpus/ownership/fail/read-after-revoke.fx)
; key: FX-OWN-001:send|kv_blk
; edge 1 = send
; edge 0 = attn
; edge 2 = reuse
; device 0 = gpu0
; device 1 = dpu0
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const s_0 Int)
(declare-const f_0 Int)
(declare-const s_1 Int)
(declare-const f_1 Int)
(declare-const s_2 Int)
(declare-const f_2 Int)
(declare-const accessor Int)
(declare-const init_owner Int)
(assert (! (and (>= s_0 0) (< s_0 f_0)) :named A_dur_0))
(assert (! (and (>= s_1 0) (< s_1 f_1)) :named A_dur_1))
(assert (! (and (>= s_2 0) (< s_2 f_2)) :named A_dur_2))
(assert (! (<= f_0 s_1) :named A_hb_0_1))
(assert (! (<= f_1 s_2) :named A_hb_1_2))
(assert (! (= accessor 1) :named A_accessor))
(assert (! (= init_owner 0) :named A_init_owner))
(assert (! (not (or (and true (= init_owner accessor)) (and (<= f_0 s_1) (not (and (< s_0 f_2) (<= s_2 s_1)))))) :named A_not_owner_nor_lessee))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
