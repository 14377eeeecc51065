; fxverify obligation FX-XF-002
; policy: compress-worst-case (corpus/transforms/ok/compress-worst-case.fx)
; key: FX-XF-002:save
; edge 0 = save
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const v_0 Bool)
(declare-const v_1 Bool)
(assert (! (= v_0 false) :named A_v_0))
(assert (! (= v_1 false) :named A_v_1))
(assert (! v_0 :named A_chain_breaks_checksum))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
