; fxverify obligation FX-XF-003
; policy: persist-over-posted-no-flush (corpus/ordering/fail/persist-over-posted-no-flush.fx)
; key: FX-XF-003:spill
; edge 0 = spill
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const n Int)
(declare-const src_dtype Int)
(declare-const step0_space_persistent Bool)
(declare-const dst_dtype Int)
(assert (! (= n 2097152) :named A_n))
(assert (! (= src_dtype 1) :named A_src_dtype))
(assert (! (= step0_space_persistent true) :named A_step0_space_persistent))
(assert (! (= dst_dtype 1) :named A_dst_dtype))
(assert (! (or (not step0_space_persistent) (and (not (= dst_dtype 0)) (not (= src_dtype 0)) (not (= src_dtype dst_dtype)))) :named A_some_check_fails))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
