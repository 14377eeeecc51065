; fxverify obligation FX-XF-003
; policy: notify-batch-in-flight (corpus/ordering/fail/notify-batch-in-flight.fx)
; key: FX-XF-003:copy[0]
; edge 0 = copy[0]
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const n Int)
(declare-const src_dtype Int)
(declare-const dst_dtype Int)
(assert (! (= n 65536) :named A_n))
(assert (! (= src_dtype 0) :named A_src_dtype))
(assert (! (= dst_dtype 0) :named A_dst_dtype))
(assert (! (and (not (= dst_dtype 0)) (not (= src_dtype 0)) (not (= src_dtype dst_dtype))) :named A_some_check_fails))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
