; fxverify obligation FX-XF-002
; policy: persist-over-posted-no-flush (corpus/ordering/fail/persist-over-posted-no-flush.fx)
; key: FX-XF-002:spill
; edge 0 = spill
; kind 0 = move
; kind 1 = quantize
; kind 2 = compress
; kind 3 = checksum
; kind 4 = filter
; kind 5 = reduce
; kind 6 = scatter
; kind 7 = gather
; kind 8 = replicate
; kind 9 = persist
; algo 1 = crc32c
; algo 2 = crc32
; algo 3 = xxh64
; algo 4 = adler32
(set-option :produce-unsat-cores true)
(set-logic QF_LIA)
(declare-const v_0 Bool)
(declare-const a_0 Int)
(declare-const required Int)
(declare-const kind_0 Int)
(declare-const algo_0 Int)
(declare-const v_1 Bool)
(declare-const a_1 Int)
(assert (! (= v_0 false) :named A_v_0))
(assert (! (= a_0 0) :named A_a_0))
(assert (! (= required 0) :named A_required))
(assert (! (= kind_0 9) :named A_kind_0))
(assert (! (= algo_0 0) :named A_algo_0))
(assert (! (= v_1 (or (= kind_0 3) (and (not (or (= kind_0 1) (= kind_0 2) (= kind_0 4) (= kind_0 5) (= kind_0 6) (= kind_0 7))) v_0))) :named A_v_1))
(assert (! (= a_1 (ite (= kind_0 3) algo_0 a_0)) :named A_a_1))
(assert (! (or (and (or (= kind_0 1) (= kind_0 2) (= kind_0 4) (= kind_0 5) (= kind_0 6) (= kind_0 7)) v_0) (and (= kind_0 9) (not (= required 0)) (not (and v_0 (= a_0 required))))) :named A_chain_breaks_checksum))
; the obligation is proved when the answer is unsat
(check-sat)
(exit)
