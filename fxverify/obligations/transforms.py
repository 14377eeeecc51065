"""Transform obligations: FX-XF-001 (destination smaller than the worst-case output), FX-XF-002
(checksum invalidated, persist without the checksum its space declares), FX-XF-003 (dtype, layout
or byte accounting mismatch), FX-XF-004 (unsafe reduction, lost accumulation); ``intents`` adds
expected accumulations (FX-XF-004) and checksums over final bytes (FX-XF-002).

Takes a ``Context``; yields ``Obligation`` objects. Worst-case output sizes (bytes, for an input of
``n`` bytes) are expansion bounds from each codec's own header, never average ratios
(``vocab.CODECS`` gives each formula and its source). Quantize ``a -> b`` maps ``n*8/bits(a)`` elements to ``ceil(elems*bits(b)/8)`` bytes plus, with
``group G``, ``ceil(elems/G)`` scales of the ``scale`` dtype (default fp32). ``filter(keep p)`` keeps
at most ``ceil(n*p/100)``; ``scatter(W)`` sends ``ceil(n/W)`` to one destination; ``gather(W)`` and
``replicate(W)`` need ``n*W``. Checksums travel in the descriptor, not in the destination.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from fxverify import ast
from fxverify.certificate import ChecksumWalk, Evidence, LayoutFacts, SizeBound
from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Code
from fxverify.edits import Chain, Dtype, Hint, Option, SizeFootprint, hint, size_region, size_text, xf_text
from fxverify.ir import (
    Checksum, Compress, Edge, Filter, Gather, Persist, Quantize, Replicate, Scatter, Transform, XfKind,
)
from fxverify.obligations import intents, reductions
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.encode import Facts
from fxverify.obligations.parametric import Held, ProvedTogether
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import (
    FALSE, Term, and_, between, bool_var, const, div, eq, evaluate, int_var, ite, mod, mul, not_, or_,
)
from fxverify.source import Span
from fxverify.vocab import CHECKSUMS, CODECS, DTYPES, canonical_dtype, dtype_bits

_VALUE_CHANGING = {XfKind.QUANTIZE, XfKind.COMPRESS, XfKind.FILTER, XfKind.REDUCE, XfKind.SCATTER, XfKind.GATHER}


class _TermArith:
    """``vocab.Arith`` over terms, so a codec's one bound formula becomes a term."""

    def div(self, a: Term, c: int) -> Term:
        return div(a, c)

    def ite(self, cond: Term, then: Term, other: Term | int) -> Term:
        return ite(cond, then, other)


_TERMS = _TermArith()


def bound_term(t: Transform, n: Term) -> Term:
    """Worst-case output bytes of transform ``t`` for an input of ``n`` bytes, as a term."""
    if isinstance(t, Compress):
        return CODECS[t.algo].bound_with(n, _TERMS)
    if isinstance(t, Quantize):
        sb, db = dtype_bits(t.src), dtype_bits(t.dst)
        elems = div(n * 8, sb)
        out = div(elems * db + 7, 8)
        if t.group:
            scale_bits = dtype_bits(t.scale)
            scales = div(elems + (t.group - 1), t.group)
            out = out + div(scales * scale_bits + 7, 8)
        return out
    if isinstance(t, Filter):
        return div(n * t.keep + 99, 100)
    if isinstance(t, Scatter):
        return div(n + (t.ways - 1), t.ways)
    if isinstance(t, (Gather, Replicate)):
        return n * t.ways
    return n


def _input_bytes(e: Edge) -> int:
    if e.src is not None:
        return e.src.nbytes
    return e.bytes if e.bytes is not None else (e.dst.nbytes if e.dst else 0)


class Overflow(Obligation):
    """FX-XF-001: for every input size ``0 <= n <= N`` (``N`` the source bytes) the chain's
    worst-case output fits the destination."""

    schedule_free = True
    unique_key = True  # one per edge, edge names are unique, and no other class has the code

    code = codes.XF_001

    def __init__(self, ctx: Context, e: Edge) -> None:
        assert e.dst is not None
        self.n_max, self.cap = _input_bytes(e), e.dst.nbytes
        super().__init__(ctx, (e.eid,), f"{self.code}:{e.name}", e.dst.span if e.dst.span.end else e.span)

    def _out(self, n: Term) -> Term:
        for t in self.ctx.edge(self.edges[0]).transforms:
            n = bound_term(t, n)
        return n

    def prove_fast(self) -> str | None:
        # All bounds are monotone in n, so n = N is the worst case; evaluate it with Python ints.
        return "arith" if self._worst() <= self.cap else None

    def evidence(self) -> Evidence | None:
        sizes = [self.n_max]
        for t in self.ctx.edge(self.edges[0]).transforms:
            out = evaluate(bound_term(t, const(sizes[-1])), {})
            assert isinstance(out, int)  # INVARIANT: a closed integer term
            sizes.append(out)
        return SizeBound(tuple(sizes), self.cap) if sizes[-1] <= self.cap else None

    def _worst(self) -> int:
        worst = evaluate(self._out(const(self.n_max)), {})
        assert isinstance(worst, int)  # INVARIANT: a closed integer term
        return worst

    def encode(self) -> Query:
        n = int_var("n")
        out = int_var("out")
        self._probes = (n, out)
        cons = (("input_size", between(n, 0, self.n_max + 1)), ("worst_case_output", eq(out, self._out(n))),
                ("exceeds_destination", out > self.cap))
        return Query(self.key, cons, minimize=(n,), header=self.header())

    def witness(self, result: Result) -> Witness:
        n, out = self._probes
        return Witness(values={"n": result.int(n), "out": result.int(out), "capacity": self.cap})

    def message(self, w: Witness) -> str:
        worst = self._worst()
        return (f"`{self.name(self.edges[0])}` can write up to {worst} B into a {self.cap} B destination: "
                f"any input of {w.values['n']} B or more overflows it (the source holds {self.n_max} B)")

    def why(self, w: Witness) -> str:
        xfs = self.ctx.edge(self.edges[0]).transforms
        chain = " |> ".join(t.kind.value for t in xfs) or "move"
        extra = "; compression can expand incompressible input" if any(t.kind is XfKind.COMPRESS for t in xfs) else ""
        return f"the destination must hold the worst-case output of `{chain}`{extra}"

    def fix(self, w: Witness) -> Hint:
        """The destination sized for the worst case: its region (of a whole-region destination, or
        when the longer destination would leave it) and the footprint."""
        worst = self._worst()
        e = self.ctx.edge(self.edges[0])
        dst = e.dst
        assert dst is not None  # INVARIANT: generated for edges with a destination
        r = self.ctx.policy.region(dst.region)
        chain = " |> ".join(xf_text(t) for t in e.transforms)
        why = (f"`{chain}` can emit {size_text(worst)} for {size_text(self.n_max)} of input" if worst != self.n_max
               else f"`{e.name}` moves {size_text(worst)}")
        if (dst.base, dst.nbytes, dst.count) == (r.base, r.size, 1):
            grown = size_region(self.ctx.policy, r, worst)
            return hint(Option((grown,), why) if grown else None)
        grow = size_region(self.ctx.policy, r, dst.base - r.base + worst) if dst.base + worst > r.end else None
        return hint(Option((grow, SizeFootprint(e.name, worst)) if grow else (SizeFootprint(e.name, worst),), why))


def required_checksum(ctx: Context, e: Edge) -> str | None:
    """The checksum algorithm a ``persist`` on ``e`` must carry: the one the space it makes
    durable declares (``space ... checksum ALGO``; the destination's, or the source's for an
    in-place edge), or ``None`` when that space declares none (then a persist needs none)."""
    fp = e.durable()
    return None if fp is None else ctx.policy.space(fp.space).checksum


class ChecksumChain(Obligation):
    """FX-XF-002 (a): no checksum is followed by a value-changing transform, and, where the
    persisted space declares ``checksum ALGO``, every persist is preceded by a still valid
    checksum of that algorithm. Encoded as a symbolic walk over the chain: ``v_i`` is "a valid
    checksum covers the bytes before step ``i``", ``a_i`` the algorithm id of the last checksum."""

    schedule_free = True

    code = codes.XF_002

    def __init__(self, ctx: Context, e: Edge) -> None:
        self.chain = e.transforms
        self.required = required_checksum(ctx, e)
        super().__init__(ctx, (e.eid,), f"{self.code}:{e.name}", e.span)

    def _walk(self) -> tuple[int, str] | None:
        valid, algo = False, None
        for i, t in enumerate(self.chain):
            if isinstance(t, Checksum):
                valid, algo = True, t.algo
            elif t.kind in _VALUE_CHANGING:
                if valid:
                    return i, "invalidates"
            elif t.kind is XfKind.PERSIST and self.required is not None and not (valid and algo == self.required):
                return i, "unprotected"
        return None

    def prove_fast(self) -> str | None:
        return "chain-walk" if self._walk() is None else None

    def evidence(self) -> Evidence | None:
        if self._walk() is not None:
            return None
        valid = [False]
        for t in self.chain:
            valid.append(True if t.kind is XfKind.CHECKSUM else False if t.kind in _VALUE_CHANGING else valid[-1])
        return ChecksumWalk(tuple(valid))

    def encode(self) -> Query:
        # Facts: the kind of each step (``kind_i``, ids from ``XfKind`` order), each checksum's
        # algorithm (``algo_i``, ids from ``vocab.CHECKSUMS`` order, from 1) and the one the
        # persisted space requires (``required``, 0: none); the walk's rule is stated over them,
        # apart from ``_walk``, so the query fails when that Python would.
        ids = {k: i for i, k in enumerate(XfKind)}
        algo_ids = {a: i + 1 for i, a in enumerate(CHECKSUMS)}

        def is_kind(kind: Term, ks: list[XfKind]) -> Term:
            return or_(*[eq(kind, ids[k]) for k in ks])
        req = int_var("required")
        cons: list[tuple[str | None, Term]] = [("v_0", eq(bool_var("v_0"), FALSE)), ("a_0", eq(int_var("a_0"), 0)),
                                               ("required", eq(req, algo_ids.get(self.required or "", 0)))]
        bad: list[Term] = []
        for i, t in enumerate(self.chain):
            vi, vn, kind = bool_var(f"v_{i}"), bool_var(f"v_{i + 1}"), int_var(f"kind_{i}")
            ai, an, algo = int_var(f"a_{i}"), int_var(f"a_{i + 1}"), int_var(f"algo_{i}")
            cons.append((f"kind_{i}", eq(kind, ids[t.kind])))
            cons.append((f"algo_{i}", eq(algo, algo_ids[t.algo] if isinstance(t, Checksum) else 0)))
            changes = is_kind(kind, sorted(_VALUE_CHANGING, key=ids.__getitem__))
            sums = is_kind(kind, [XfKind.CHECKSUM])
            protected = and_(vi, eq(ai, req))
            bad += [and_(changes, vi), and_(is_kind(kind, [XfKind.PERSIST]), not_(eq(req, 0)), not_(protected))]
            # a checksum makes the bytes covered; a value-changing step uncovers them; others keep
            cons.append((f"v_{i + 1}", eq(vn, or_(sums, and_(not_(changes), vi)))))
            cons.append((f"a_{i + 1}", eq(an, ite(sums, algo, ai))))
        cons.append(("chain_breaks_checksum", or_(*bad)))
        header = self.header() + tuple(f"kind {i} = {k.value}" for k, i in ids.items()) \
            + tuple(f"algo {i} = {a}" for a, i in algo_ids.items())
        return Query(self.key, tuple(cons), header=header)

    def witness(self, result: Result) -> Witness:
        hit = self._walk() or (0, "invalidates")
        return Witness(values={"step": hit[0], "kind": hit[1], "transform": self.chain[hit[0]].kind.value})

    def message(self, w: Witness) -> str:
        step = w.values["transform"]
        if w.values["kind"] == "unprotected":
            return (f"`{self.name(self.edges[0])}` persists bytes with no valid `{self.required}` checksum over them, "
                    f"which their space requires")
        return f"`{step}` in `{self.name(self.edges[0])}` changes bytes after their checksum was taken"

    def why(self, w: Witness) -> str:
        return ("a checksum covers the bytes it was computed over; a space that declares `checksum ALGO` "
                "needs one over the final bytes of every persist")

    def fix(self, w: Witness) -> Hint:
        """The checksum moved after the last value-changing step (it covers the final bytes), or
        the space's checksum added right before the persist."""
        e, i = self.ctx.edge(self.edges[0]), int(w.values["step"])
        if w.values["kind"] == "invalidates":
            sums = [t for t in self.chain[:i] if isinstance(t, Checksum)]
            rest = [t for t in self.chain if not (isinstance(t, Checksum) and t in sums)]
            last = max(k for k, t in enumerate(rest) if t.kind in _VALUE_CHANGING)
            return hint(Chain(e.name, tuple(rest[:last + 1] + sums[-1:] + rest[last + 1:])))
        assert self.required is not None  # INVARIANT: an unprotected persist needs the space's checksum
        return hint(Chain(e.name, self.chain[:i] + (Checksum(self.required),) + self.chain[i:]))


class Layout(Obligation):
    """FX-XF-003: dtypes agree from source region through the chain to the destination region,
    quantize inputs hold whole elements, scatter splits evenly, and an in-place gather's rank is
    below its ways."""

    schedule_free = True
    unique_key = True  # one per edge, edge names are unique, and no other class has the code

    code = codes.XF_003

    def __init__(self, ctx: Context, e: Edge) -> None:
        self.problems = _layout_problems(ctx, e)
        super().__init__(ctx, (e.eid,), f"{self.code}:{e.name}", e.span)

    def prove_fast(self) -> str | None:
        return "static-layout" if not self.problems else None

    def evidence(self) -> Evidence | None:
        if self.problems:
            return None
        e = self.ctx.edge(self.edges[0])
        pol = self.ctx.policy
        cur = pol.region(e.src.region).dtype if e.src is not None else None
        dtypes = []
        for t in e.transforms:
            dtypes.append(cur)
            cur = t.dst if isinstance(t, Quantize) else cur
        dtypes.append(cur)
        return LayoutFacts(tuple(dtypes), _input_bytes(e))

    def encode(self) -> Query:
        # The facts are the IR's own values (dtype ids, element widths, byte counts, ways, ranks,
        # whether the destination space is persistent); the checks over them are stated here, as a
        # symbolic walk of the chain, apart from ``_layout_problems``, so the query fails when
        # that Python would be wrong (a dump re-checked by another solver re-derives each check).
        e = self.ctx.edge(self.edges[0])
        facts, checks = _layout_query(self.ctx, e)
        cons = facts + [("some_check_fails", or_(*checks))]
        return Query(self.key, tuple(cons), header=self.header())

    def witness(self, result: Result) -> Witness:
        # The checks are restated in SMT; should they fail where ``_layout_problems`` found
        # nothing, say so rather than print an empty problem.
        problem = self.problems[0][0] if self.problems else "a layout rule fails in the SMT model (see --dump-smt)"
        return Witness(values={"problem": problem})

    def message(self, w: Witness) -> str:
        return f"`{self.name(self.edges[0])}`: {w.values['problem']}"

    def _persist_space(self, w: Witness) -> str | None:
        """The destination space when the witness's problem is a ``persist`` into a space that is
        not persistent, else ``None``."""
        e = self.ctx.edge(self.edges[0])
        problem = str(w.values.get("problem", ""))
        return e.dst.space if e.dst is not None and problem.startswith("persist into") else None

    def why(self, w: Witness) -> str:
        if self._persist_space(w) is not None:
            return ("`persist` promises the bytes survive a power loss or reboot; a space not declared `persistent` "
                    "(DRAM, HBM, a tmpfs staging area) loses them")
        return "producer and consumer must agree on dtype and layout, and bytes must add up"

    def fix(self, w: Witness) -> Hint:
        """Each quantize step made to read the dtype it is given; a destination holding another
        dtype than the chain's output declared with it, or a quantize to its dtype appended.
        Sizes that do not divide, ranks, and persists into volatile memory get no edit (the
        message and ``why`` of a persist say what to do: no edit can tell which space is
        non-volatile)."""
        return _layout_fix(self.ctx, self.ctx.edge(self.edges[0]))


_DT_NAMES = sorted({d.canonical for d in DTYPES.values()})


def _dt(name: str) -> int:
    """A fixed small id for a dtype (its rank among canonical names), so dumps are repeatable."""
    return _DT_NAMES.index(canonical_dtype(name)) + 1


def _layout_problems(ctx: Context, e: Edge) -> list[tuple[str, int, int]]:
    pol = ctx.policy
    out: list[tuple[str, int, int]] = []
    src_dt = pol.region(e.src.region).dtype if e.src is not None else None
    dst_dt = pol.region(e.dst.region).dtype if e.dst is not None else None
    cur = src_dt
    n = _input_bytes(e)
    for t in e.transforms:
        if isinstance(t, Quantize):
            a, b = t.src, t.dst
            if cur is not None and canonical_dtype(cur) != canonical_dtype(a):
                out.append((f"quantize expects `{a}` but the source holds `{cur}`", _dt(a), _dt(cur)))
            bits = dtype_bits(a)
            if (n * 8) % bits:
                out.append((f"{n} B is not a whole number of `{a}` elements", (n * 8) % bits, 0))
            cur = b
        elif isinstance(t, Scatter):
            if n % t.ways:
                out.append((f"scatter of {n} B into {t.ways} ways leaves {n % t.ways} B unaccounted", n % t.ways, 0))
        elif isinstance(t, Gather) and t.rank is not None:
            if not 0 <= t.rank < t.ways:
                out.append((f"gather rank {t.rank} is outside 0..{t.ways}", t.rank, 0))
        elif isinstance(t, Persist) and (kept := e.durable()) is not None and not pol.space(kept.space).persistent:
            out.append((f"persist into `{kept.space}`, which is not declared `persistent`: its bytes do not survive a "
                        "power loss or reboot", 0, 1))
    if e.dst is not None and dst_dt is not None and cur is not None and canonical_dtype(dst_dt) != canonical_dtype(cur):
        out.append((f"writes `{cur}` into `{e.dst.region}`, which holds `{dst_dt}`", _dt(cur), _dt(dst_dt)))
    return out


def _layout_fix(ctx: Context, e: Edge) -> Hint:
    """``Layout.fix``: see there."""
    pol = ctx.policy
    cur = pol.region(e.src.region).dtype if e.src is not None else None
    steps: list[Transform] = []
    for t in e.transforms:
        if isinstance(t, Quantize):
            if cur is not None and canonical_dtype(cur) != canonical_dtype(t.src):
                t = replace(t, src=cur)
            cur = t.dst
        steps.append(t)
    chain = Chain(e.name, tuple(steps)) if tuple(steps) != e.transforms else None
    dst = pol.region(e.dst.region) if e.dst is not None else None
    if dst is None or dst.dtype is None or cur is None or canonical_dtype(dst.dtype) == canonical_dtype(cur):
        return hint(chain)
    convert = Chain(e.name, tuple(steps) + (Quantize(cur, dst.dtype),))
    declare = Dtype(dst.family, cur)
    return hint((chain, declare) if chain else declare, convert)


def _layout_query(ctx: Context, e: Edge) -> tuple[list[tuple[str | None, Term]], list[Term]]:
    """FX-XF-003 as SMT: ``(facts, checks)``. Facts fix one variable per IR value the layout rules
    read (``src_dtype``/``dst_dtype``: dtype ids from ``_dt``, 0 when untyped; ``n``: input bytes;
    per step ``i`` its dtypes, ways, rank, and whether the destination space is persistent);
    element widths (``vocab.dtype_bits``) and scatter ways are constants of the terms. Each check
    is true when one rule of ``Layout`` fails (specs/obligations.md, FX-XF-003)."""
    pol = ctx.policy
    facts = Facts()
    fact = facts.fact
    src_dt = pol.region(e.src.region).dtype if e.src is not None else None
    dst_dt = pol.region(e.dst.region).dtype if e.dst is not None else None
    n = fact("n", _input_bytes(e))
    cur: Term = fact("src_dtype", _dt(src_dt) if src_dt else 0)
    checks: list[Term] = []
    for i, t in enumerate(e.transforms):
        if isinstance(t, Quantize):
            q_from, q_to = fact(f"step{i}_from", _dt(t.src)), fact(f"step{i}_to", _dt(t.dst))
            checks.append(and_(not_(eq(cur, 0)), not_(eq(cur, q_from))))
            checks.append(not_(eq(mod(mul(8, n), dtype_bits(t.src)), 0)))
            cur = q_to
        elif isinstance(t, Scatter):
            checks.append(not_(eq(mod(n, t.ways), 0)))
        elif isinstance(t, Gather) and t.rank is not None:
            rank, ways = fact(f"step{i}_rank", t.rank), fact(f"step{i}_ways", t.ways)
            checks.append(or_(rank < 0, not_(rank < ways)))
        elif isinstance(t, Persist) and (kept := e.durable()) is not None:
            checks.append(not_(fact(f"step{i}_space_persistent", pol.space(kept.space).persistent)))
    dst = fact("dst_dtype", _dt(dst_dt) if dst_dt else 0)
    checks.append(and_(not_(eq(dst, 0)), not_(eq(cur, 0)), not_(eq(cur, dst))))
    return facts.constraints, checks


def _per_edge(ctx: Context, e: Edge) -> list[Obligation]:
    """The FX-XF-001, FX-XF-002 and FX-XF-003 obligations of edge ``e``, in that order."""
    out: list[Obligation] = []
    if e.dst is not None and (e.src is not None or e.transforms):
        out.append(Overflow(ctx, e))
    if e.transforms:
        out.append(ChecksumChain(ctx, e))
    if e.transforms or (e.src is not None and e.dst is not None):
        out.append(Layout(ctx, e))
    return out


#: The clauses the per-edge transform obligations read besides the footprints: the chain, and a
#: declared byte count (the input size of an edge without a source).
_READS = (ast.TransformClause, ast.BytesClause)


def _proved_families(ctx: Context) -> dict[Span, list[Code]]:
    """The declarations whose per-edge transform obligations are proved for every index value,
    with their codes: every instance has the same inputs (``Parametric.invariant``), and the
    first instance's obligations all have fast proofs, which then hold for each instance."""
    par = ctx.parametric
    proved: dict[Span, list[Code]] = {}
    if par is None or any(str(c) in par.skip for c in (codes.XF_001, codes.XF_002, codes.XF_003)):
        return proved
    for span, (first, _n) in par.families().items():
        obs = _per_edge(ctx, first)
        if not obs:
            continue
        why = par.invariant(span, _READS)
        if not why:
            open_ = [str(ob.code) for ob in obs if ob.prove_fast() is None]
            why = f"its first instance has no fast proof of {', '.join(open_)}" if open_ else ""
        for ob in obs:
            par.report(span, ob.code, why)
        if not why:
            proved[span] = [ob.code for ob in obs]
    return proved


def generate(ctx: Context) -> Iterator[Obligation | ProvedTogether]:
    """Yield every transform obligation of ``ctx.policy``. With a parametric prover
    (``Context.parametric``), those of a declaration proved for every index value
    (``_proved_families``) come as ``ProvedTogether`` runs, in the places of their instances."""
    pol = ctx.policy
    proved = _proved_families(ctx)
    held = Held()
    for e in pol.edges:
        got = proved.get(e.span) if proved else None
        if got is not None:
            for c in got:
                yield from held.hold(f"{c}:{e.name}", c)
            continue
        obs = _per_edge(ctx, e)
        if obs:
            yield from held.flush()
        yield from obs
    yield from held.flush()
    yield from reductions.generate(ctx)
    yield from intents.generate(ctx)
