"""Map consistency-class obligations: FX-MAP-001 (local map used off its device), FX-MAP-002
(lost update), FX-MAP-003 (guard may read stale), FX-MAP-004 (per-device map read as one value),
FX-MAP-005 (const map written).

Takes a ``Context``; yields ``Obligation`` objects, and ``ProvedTogether`` runs for the FX-MAP-004
pairs the parametric prover orders at once (``hb_orders``). Map operations happen within their edge's
interval. Classes (BRIEF section 1): ``local(dev)`` lives on one device; ``per_device`` has one slot
per device, written only by that device; ``eventual`` replicas merge with a commutative operator and
guarantee no visibility; ``causal`` reads see every write that happens-before them; ``linearizable``
reads see every write that finished before them in real time; ``const`` entries are set before the
flow and no edge writes them (issue 10), so every read sees the initial value and a guard of a
``const`` map needs no ordering: its writes are FX-MAP-005 and take no part in FX-MAP-002/003.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from fxverify.certificate import Evidence, LocalClass, Ordered, OwnSlot
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import Hint, MapClass, MapOpAs, Merge, Option, after, drive, hint
from fxverify.ir import Edge, MapDecl, MapOp, MapOpKind
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.hb_orders import orders_for, same_entry
from fxverify.obligations.parametric import Held, ProvedTogether
from fxverify.obligations.encode import (
    DeviceFacts, Facts, finish, overlap, projected_schedule, start, time_objectives,
)
from fxverify.obligations.witness import Step, Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import Term, and_, eq, int_var, not_, or_
from fxverify.vocab import AC_OPS, ClassKind

_WRITES = (MapOpKind.WRITE, MapOpKind.UPDATE)
#: Operations a ``const`` map refuses (FX-MAP-005): the writes, and ``aggregate``, which folds the
#: slots the flow's writers leave and has nothing to fold in a map no edge writes.
CONST_REFUSES = (MapOpKind.WRITE, MapOpKind.UPDATE, MapOpKind.AGGREGATE)


class _MapOb(Obligation):
    def __init__(self, ctx: Context, edges: tuple[int, ...], key: str, op: MapOp, decl: MapDecl,
                 related: tuple[Label, ...] = (), pos: int = 0) -> None:
        #: ``op`` and its position in the primary edge's map operations (identical operations
        #: may repeat, so the position, not the value, identifies it).
        self.op, self.decl, self.pos = op, decl, pos
        super().__init__(ctx, edges, key, op.span if op.span.end else ctx.edge(edges[0]).span, related)

    def _timed(self, cond, label: str, facts: tuple[list[tuple[str | None, Term]], tuple[str, ...]] = ([], ())) -> Query:
        """``SCHED`` of the edges and ``cond`` (labelled ``label``), after the constraints of
        ``facts`` (``_map_facts``'s, whose header lines are appended)."""
        cons = facts[0] + projected_schedule(self.ctx.graph, self.edges) + [(label, cond)]
        return Query(self.key, tuple(cons), minimize=tuple(time_objectives(self.edges)), header=self.header() + facts[1])

    def witness(self, result: Result) -> Witness:
        return Witness(schedule=self.schedule_of(result),
                       values={"map": self.decl.name, "key": -1 if self.op.key is None else self.op.key})

    def violating(self, w: Witness) -> Step | None:
        """The map operation the message names: ``op`` on the first primary edge (the guard, the
        read, the aggregate); ``LostUpdate`` names the later write."""
        return Step(self.edges[0], "map", self.pos)

    def context(self, w: Witness) -> tuple[int, ...]:
        """Every other edge that writes the entry ``op`` names (each writer involved), with the
        edges on HB paths between the primary edges."""
        writers = {e.eid for e in self.ctx.policy.edges if e.eid not in self.edges and any(
            o.map == self.op.map and o.key == self.op.key and o.kind in _WRITES for o in e.map_ops)}
        return tuple(sorted(set(super().context(w)) | writers))


def _map_facts(decl: MapDecl, **ops: MapOp) -> tuple[list[tuple[str | None, Term]], dict[str, Term], tuple[str, ...]]:
    """Facts of a map query as SMT variables fixed to the IR's values: ``map_class`` (the id of
    ``decl``'s class in ``ClassKind`` order), ``merge_commutes`` (``decl.merge`` is in
    ``vocab.AC_OPS``) and, per named operation, ``<name>_kind`` (its ``MapOpKind`` id). Returns
    ``(constraints, variables by name, header lines naming the ids)``; the query states each
    class rule over these, so the rule is not precomputed in Python."""
    facts = Facts()
    cls_ids = {k: i for i, k in enumerate(ClassKind)}
    op_ids = {k: i for i, k in enumerate(MapOpKind)}
    out = {"map_class": facts.fact("map_class", cls_ids[decl.cls.kind])}
    out |= {f"{n}_kind": facts.fact(f"{n}_kind", op_ids[o.kind]) for n, o in ops.items()}
    out["merge_commutes"] = facts.fact("merge_commutes", decl.merge in AC_OPS)
    header = tuple(f"class {i} = {k.value}" for k, i in cls_ids.items()) + tuple(
        f"op {i} = {k.value}" for k, i in op_ids.items())
    return facts.constraints, out, header


def class_is(v: Term, kind: ClassKind) -> Term:
    """``v`` (a ``map_class`` fact of ``_map_facts``) is ``kind``."""
    return eq(v, list(ClassKind).index(kind))


def op_is(v: Term, kind: MapOpKind) -> Term:
    """``v`` (a ``<name>_kind`` fact of ``_map_facts``) is ``kind``."""
    return eq(v, list(MapOpKind).index(kind))


class LocalMap(_MapOb):
    """FX-MAP-001: a ``local(dev)`` map is accessed only from hooks on ``dev``."""

    schedule_free = True

    code = codes.MAP_001

    def prove_fast(self) -> str | None:
        return "static-class" if self.ctx.edge(self.edges[0]).device == self.decl.cls.device else None

    def evidence(self) -> Evidence | None:
        e = self.ctx.edge(self.edges[0])
        return LocalClass(self.pos, self.decl.name, e.device) if self.prove_fast() else None

    def encode(self) -> Query:
        pol = self.ctx.policy
        ids = {d.name: i for i, d in enumerate(pol.devices)}
        dev = int_var("accessing_device")
        cons = (("accessing_device", eq(dev, ids[self.ctx.edge(self.edges[0]).device])),
                ("off_home_device", not_(eq(dev, ids[self.decl.cls.device or ""]))))
        return Query(self.key, cons, header=self.header())

    def witness(self, result: Result) -> Witness:
        w = super().witness(result)
        w.values["device"] = self.ctx.edge(self.edges[0]).device
        return w

    def context(self, w: Witness) -> tuple[int, ...]:
        """None: the access alone breaks the rule, wherever the other writers run."""
        return ()

    def message(self, w: Witness) -> str:
        e = self.ctx.edge(self.edges[0])
        return f"`{e.name}` on `{e.device}` accesses `{self.decl.name}`, which is local to `{self.decl.cls.device}`"

    def why(self, w: Witness) -> str:
        return "a `local(dev)` map exists only in the memory of its device"

    def fix(self, w: Witness) -> Hint:
        """A class every device reaches, or the access driven from the map's device. For an
        ``update`` (a counter or statistic each device adds to) ``per_device`` comes first: one
        slot per device, summed by ``aggregate`` (BPF's per-CPU maps), with no cross-device
        traffic; for other operations it comes after the shared classes."""
        e = self.ctx.edge(self.edges[0])
        home = drive(self.ctx.policy, e.name, self.decl.cls.device, e.hook) if self.decl.cls.device else None
        shared = (MapClass(self.decl.name, ClassKind.CAUSAL), MapClass(self.decl.name, ClassKind.LINEARIZABLE))
        slots = (MapClass(self.decl.name, ClassKind.PER_DEVICE),)
        return hint(*(slots + shared if self.op.kind is MapOpKind.UPDATE else shared + slots), home)


class LostUpdate(_MapOb):
    """FX-MAP-002: two writes to the same entry of a shared map either are HB-ordered or commute
    (both ``update`` with an associative and commutative merge)."""

    code = codes.MAP_002

    def __init__(self, ctx: Context, edges: tuple[int, ...], key: str, first: MapOp, op: MapOp, decl: MapDecl,
                 related: tuple[Label, ...] = (), pos: int = 0, first_pos: int = 0) -> None:
        #: ``first`` (at ``first_pos``): the operation of ``edges[0]``; ``op`` (at ``pos``) that of
        #: ``edges[1]``
        self.first, self.first_pos = first, first_pos
        super().__init__(ctx, edges, key, op, decl, related, pos)

    def violating(self, w: Witness) -> Step | None:
        """The write of the edge that starts second (on a tie, the second edge's): the one that
        overlaps a write already under way."""
        a, b = self.edges
        if a in w.schedule and b in w.schedule and w.schedule[a][0] > w.schedule[b][0]:
            return Step(a, "map", self.first_pos)
        return Step(b, "map", self.pos)

    def prove_fast(self) -> str | None:
        return "hb-reachability" if self.ctx.graph.ordered(*self.edges) else None

    def evidence(self) -> Evidence | None:
        p = self.either_path(*self.edges)
        return None if p is None else Ordered(p)

    def encode(self) -> Query:
        # The commuting rule is restated over the facts: both updates with an AC merge commute.
        facts, v, header = _map_facts(self.decl, first=self.first, second=self.op)
        commute = and_(op_is(v["first_kind"], MapOpKind.UPDATE), op_is(v["second_kind"], MapOpKind.UPDATE), v["merge_commutes"])
        return self._timed(and_(overlap(*self.edges), not_(commute)), "concurrent_writes", (facts, header))

    def message(self, w: Witness) -> str:
        a, b = self.edges
        return f"`{self.name(a)}` and `{self.name(b)}` may write `{self.decl.name}[{self.op.key}]` concurrently: one update is lost"

    def why(self, w: Witness) -> str:
        merge = self.decl.merge or "none"
        return f"concurrent writes survive only when both are `update`s with a commutative, associative merge (`{self.decl.name}` merges with `{merge}`)"

    def fix(self, w: Witness) -> Hint:
        """One writer at a time (order the writes); a commutative merge only for a counter: both
        writes ``update`` an integer value and the declared merge is arithmetic. A blind write,
        a ``device`` value or a ``last``/``first`` merge sets a configuration value, which a sum of
        two settings would corrupt: it wants one writer at a time. Where each edge loads the entry
        and stores it (a non-atomic increment), first the atomic add: both stores become
        ``update``s merging with ``sum`` (bpf-helpers(7): ``__sync_fetch_and_add`` on a map
        value)."""
        a, b = self.edges
        counting = self.decl.value_type != "device" and self.decl.merge not in ("last", "first")
        counter = counting and self.first.kind is MapOpKind.UPDATE and self.op.kind is MapOpKind.UPDATE
        loaded = all(any(o.kind is MapOpKind.READ and o.map == self.decl.name and o.key == self.op.key
                         for o in self.ctx.edge(x).map_ops) for x in (a, b))
        atomic: Option | None = None
        if counting and loaded and self.first.kind is MapOpKind.WRITE and self.op.kind is MapOpKind.WRITE:
            edits: tuple[MapOpAs | Merge, ...] = tuple(
                MapOpAs(self.name(x), self.decl.name, self.op.key, MapOpKind.UPDATE, was=MapOpKind.WRITE)
                for x in dict.fromkeys((a, b)))
            if self.decl.merge not in AC_OPS:
                edits += (Merge(self.decl.name, "sum"),)
            atomic = Option(edits, "an atomic add (`__sync_fetch_and_add`) in place of each load and store")
        return hint(atomic, after(self.name(b), self.name(a)), Merge(self.decl.name, "sum") if counter else None)


class StaleGuard(_MapOb):
    """FX-MAP-003: a guard read on ``m[k]`` sees writer ``w``: on ``eventual`` maps ``w`` must
    happen after it; on every other class ``w`` must happen-before the guard or after it (a
    ``linearizable``, ``local`` or ``per_device`` read sees a write finished before it in real
    time, but not one still in flight; only HB rules that out in every schedule, BRIEF section 3)."""

    code = codes.MAP_003

    def prove_fast(self) -> str | None:
        g_, w = self.edges
        graph = self.ctx.graph
        if graph.hb_before(g_, w):
            return "hb-reachability"
        if self.decl.cls.kind is not ClassKind.EVENTUAL and graph.hb_before(w, g_):
            return "hb-reachability"
        return None

    def evidence(self) -> Evidence | None:
        g_, w = self.edges
        p = self.path(g_, w) or (self.path(w, g_) if self.decl.cls.kind is not ClassKind.EVENTUAL else None)
        return None if p is None else Ordered(p)

    def encode(self) -> Query:
        g_, w = self.edges
        # The class rule is stated over the ``map_class`` fact: on `eventual` any writer that
        # started before the guard may be missed; elsewhere only one still in flight.
        facts, v, header = _map_facts(self.decl)
        eventual = class_is(v["map_class"], ClassKind.EVENTUAL)
        missed = or_(and_(eventual, start(w) < start(g_)),
                     and_(not_(eventual), start(w) < start(g_), start(g_) < finish(w)))
        label = "writer_started_before_guard" if self.decl.cls.kind is ClassKind.EVENTUAL else "writer_in_flight_at_guard"
        return self._timed(missed, label, (facts, header))

    def message(self, w: Witness) -> str:
        g_, wr = self.edges
        return f"guard `{self.decl.name}[{self.op.key}]` in `{self.name(g_)}` may miss the write by `{self.name(wr)}` ({self.decl.cls} map)"

    def why(self, w: Witness) -> str:
        if self.decl.cls.kind is ClassKind.EVENTUAL:
            return "an `eventual` map never guarantees that a read sees a given write"
        if self.decl.cls.kind is ClassKind.CAUSAL:
            return "a `causal` map guarantees only writes that happen-before the read"
        return f"a `{self.decl.cls.kind.value}` read sees the writes finished before it, not one still in flight"

    def fix(self, w: Witness) -> Hint:
        """The guard after the write (unless it is already), and on an ``eventual`` map a class
        whose reads see the writes that happen-before them."""
        g_, wr = self.edges
        order = () if self.ctx.graph.hb_before(wr, g_) else (after(self.name(g_), self.name(wr)),)
        if self.decl.cls.kind is ClassKind.EVENTUAL:
            return hint((MapClass(self.decl.name, ClassKind.CAUSAL),) + order)
        return hint(order)


class PerDeviceRead(_MapOb):
    """FX-MAP-004: a plain read of a ``per_device`` entry is made only on the single device that
    writes it; otherwise the reader must ``aggregate`` after every writer."""

    code = codes.MAP_004

    def __init__(self, ctx: Context, edges: tuple[int, ...], key: str, op: MapOp, decl: MapDecl,
                 foreign: tuple[str, ...] = (), pos: int = 0, writers: tuple[str, ...] = ()) -> None:
        #: ``writers``: the devices of every writer of the entry; ``foreign``: those that are not
        #: the reader's (a plain read is wrong when there is one)
        self.foreign, self.writers = foreign, writers
        self.schedule_free = op.kind is not MapOpKind.AGGREGATE  # a plain read is wrong in every schedule
        super().__init__(ctx, edges, key, op, decl, pos=pos)

    def prove_fast(self) -> str | None:
        if self.op.kind is MapOpKind.AGGREGATE:
            return "hb-reachability" if self.ctx.graph.hb_before(self.edges[1], self.edges[0]) else None
        return "static-class" if not self.foreign else None

    def evidence(self) -> Evidence | None:
        if self.op.kind is MapOpKind.AGGREGATE:
            p = self.path(self.edges[1], self.edges[0])
            return None if p is None else Ordered(p)
        return None if self.foreign else OwnSlot(self.pos, self.decl.name, self.op.key)

    def encode(self) -> Query:
        if self.op.kind is MapOpKind.AGGREGATE:
            r, w = self.edges
            return self._timed(not_(finish(w) <= start(r)), "writer_not_before_aggregate")
        # Facts: the reader's device and each writer's; a foreign writer is found by the solver.
        facts = DeviceFacts(self.ctx.policy)
        reader = facts.device("reader_device", self.ctx.edge(self.edges[0]).device)
        others = [not_(eq(facts.device(f"writer_device_{k}", dev), reader)) for k, dev in enumerate(self.writers)]
        cons = facts.constraints + [("plain_read_of_a_foreign_slot", or_(*others))]
        return Query(self.key, tuple(cons), header=self.header() + facts.header())

    def witness(self, result: Result) -> Witness:
        w = super().witness(result)
        if self.foreign:
            w.values["writers"] = ",".join(self.foreign)
        return w

    def message(self, w: Witness) -> str:
        r = self.edges[0]
        if self.op.kind is MapOpKind.AGGREGATE:
            return f"`{self.name(r)}` aggregates `{self.decl.name}[{self.op.key}]` before `{self.name(self.edges[1])}` has written its slot"
        return (f"`{self.name(r)}` reads per-device map `{self.decl.name}[{self.op.key}]` as one value, "
                f"but {', '.join(f'`{d}`' for d in self.foreign)} write their own slots")

    def why(self, w: Witness) -> str:
        return "a `per_device` map holds one slot per device; its value is the aggregate of every slot"

    def fix(self, w: Witness) -> Hint:
        """The aggregate after the writer; a plain read made an ``aggregate``, after every writer
        of the entry it does not already follow."""
        r = self.edges[0]
        if self.op.kind is MapOpKind.AGGREGATE:
            return hint(after(self.name(r), self.name(self.edges[1])))
        g = self.ctx.graph
        late = [x for x in self.context(w) if x != r and not g.hb_before(x, r) and any(
            o.map == self.op.map and o.key == self.op.key and o.kind in _WRITES for o in self.ctx.edge(x).map_ops)]
        agg = MapOpAs(self.name(r), self.decl.name, self.op.key, MapOpKind.AGGREGATE)
        return hint((agg,) + ((after(self.name(r), *[self.name(x) for x in late]),) if late else ()))


class ConstWrite(_MapOb):
    """FX-MAP-005: no edge writes, updates or aggregates a ``const`` map. Generated only for such
    an operation, which is wrong in every schedule: the query restates the rule over the map's
    class and the operation's kind, so it is satisfiable exactly when the rule is broken."""

    schedule_free = True

    code = codes.MAP_005

    def encode(self) -> Query:
        facts, v, header = _map_facts(self.decl, op=self.op)
        refused = or_(*[op_is(v["op_kind"], k) for k in CONST_REFUSES])
        cons = facts + [("const_map_written", and_(class_is(v["map_class"], ClassKind.CONST), refused))]
        return Query(self.key, tuple(cons), header=self.header() + header)

    def message(self, w: Witness) -> str:
        e = self.ctx.edge(self.edges[0])
        verb = {MapOpKind.WRITE: "writes", MapOpKind.UPDATE: "updates"}.get(self.op.kind, "aggregates")
        return f"`{e.name}` {verb} `{self.decl.name}[{self.op.key}]`, but `{self.decl.name}` is a `const` map"

    def why(self, w: Witness) -> str:
        return ("a `const` map is filled before the flow and loaded read-only for programs; "
                "no edge may change it, and it has no per-device slots to aggregate")

    def fix(self, w: Witness) -> Hint:
        """An aggregate of a ``const`` map read plainly; a written map given a writable class."""
        if self.op.kind is MapOpKind.AGGREGATE:
            return hint(MapOpAs(self.name(self.edges[0]), self.decl.name, self.op.key, MapOpKind.READ))
        return hint(MapClass(self.decl.name, ClassKind.LINEARIZABLE))


def _op_id(e: Edge, i: int) -> str:
    """``edge#i``: the edge and the position ``i`` of the map operation in it (keys stay unique)."""
    return f"{e.name}#{i}"


def _commute(a: MapOp, b: MapOp, decl: MapDecl) -> bool:
    return a.kind is MapOpKind.UPDATE and b.kind is MapOpKind.UPDATE and decl.merge in AC_OPS


def generate(ctx: Context) -> Iterator[Obligation | ProvedTogether]:
    """Yield every map obligation of ``ctx.policy``. With a parametric prover, the FX-MAP-004
    obligations of an ``aggregate`` and the writes of its entry whose declarations are ordered
    for every index value (``hb_orders.Orders``, ``hb_orders.same_entry``) come as ``ProvedTogether``
    runs, in the places their instances unroll."""
    pol = ctx.policy
    writers: dict[tuple[str, int | None], list[tuple[Edge, MapOp, int]]] = defaultdict(list)
    readers: list[tuple[Edge, MapOp, int]] = []
    for e in pol.edges:
        for i, op in enumerate(e.map_ops):
            decl = pol.map(op.map)
            if decl.cls.kind is ClassKind.LOCAL:
                yield LocalMap(ctx, (e.eid,), f"{codes.MAP_001}:{_op_id(e, i)}|{op.map}", op, decl, pos=i)
            if decl.cls.kind is ClassKind.CONST:
                if op.kind in CONST_REFUSES:
                    yield ConstWrite(ctx, (e.eid,), f"{codes.MAP_005}:{_op_id(e, i)}|{op.map}", op, decl, pos=i)
                continue  # no write takes effect: reads see the initial value, guards need no order
            if op.kind in _WRITES:
                writers[(op.map, op.key)].append((e, op, i))
            else:
                readers.append((e, op, i))
    for (mname, key), ws in sorted(writers.items(), key=lambda kv: (kv[0][0], -1 if kv[0][1] is None else kv[0][1])):
        decl = pol.map(mname)
        # Updates with an associative, commutative merge commute with each other: only pairs with
        # at least one blind write (or a non-commuting merge) can lose an update.
        blind = [(e, o, j) for e, o, j in ws if not _commute(o, o, decl)]
        for i, (ea, oa, ja) in enumerate(ws):
            others = ws[i + 1:] if not _commute(oa, oa, decl) else [x for x in blind if x[0].eid > ea.eid]
            for eb, ob, jb in others:
                if ea.eid == eb.eid or _commute(oa, ob, decl):
                    continue
                if decl.cls.kind is ClassKind.PER_DEVICE and ea.device != eb.device:
                    continue  # different slots
                yield LostUpdate(ctx, (ea.eid, eb.eid), f"{codes.MAP_002}:{_op_id(ea, ja)}|{_op_id(eb, jb)}|{mname}[{key}]", oa, ob, decl,
                                 (Label(ea.span, f"`{ea.name}` writes here"),), pos=jb, first_pos=ja)
    orders, held = orders_for(ctx, codes.MAP_004), Held()
    for e, op, i in readers:
        decl = pol.map(op.map)
        ws = [(we, wo, j) for we, wo, j in writers.get((op.map, op.key), []) if we.eid != e.eid]
        me = _op_id(e, i)
        if op.kind is MapOpKind.GUARD:
            for we, _wo, j in ws:
                if decl.cls.kind is ClassKind.PER_DEVICE and we.device != e.device:
                    continue  # another device's slot: the guard reads its own
                yield StaleGuard(ctx, (e.eid, we.eid), f"{codes.MAP_003}:{me}|{_op_id(we, j)}|{op.map}[{op.key}]", op, decl, pos=i)
        if decl.cls.kind is ClassKind.PER_DEVICE:
            if op.kind is MapOpKind.AGGREGATE:
                for we, _wo, j in ws:
                    key = f"{codes.MAP_004}:{me}|{_op_id(we, j)}|{op.map}[{op.key}]"
                    if orders is not None and orders.proved(codes.MAP_004, we.span, e.span, same_entry):
                        yield from held.hold(key, codes.MAP_004)
                        continue
                    yield from held.flush()
                    yield PerDeviceRead(ctx, (e.eid, we.eid), key, op, decl, pos=i)
                yield from held.flush()
            else:
                devices = tuple(sorted({we.device for we, _, _ in ws}))
                foreign = tuple(d for d in devices if d != e.device)
                yield PerDeviceRead(ctx, (e.eid,), f"{codes.MAP_004}:{me}|{op.map}[{op.key}]", op, decl, foreign, pos=i,
                                    writers=devices)
    if orders is not None:
        orders.report()
