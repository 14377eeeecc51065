"""The independent concrete simulator.

Takes an ``ir.Policy`` and a concrete schedule (edge id -> ``(start, finish)`` in ns) and reports
every violation that the schedule exhibits, by executing the execution model of BRIEF section 2
event by event. It is written from that model, not from the SMT encoding: it imports nothing from
``fxverify.smt`` or ``fxverify.obligations`` (but the ``Witness`` it replays), recomputes
happens-before from ``after`` clauses and streams by its own search, routes transfers by its own
breadth-first search (``world``), and recomputes worst-case transform sizes with its own integer
arithmetic (``static_rules``). The one fact it shares with the encoder is each codec's bound
formula, defined once in ``vocab.CODECS`` and checked against the values the codecs' own headers
give (``tests/test_simulate.py``).

Uses:
- ``Simulator.read_values`` gives the values each plain map read may observe (``map_reads``),
  which ``lower --kernel-run`` checks the kernel's observations against;
- ``Simulator.confirm`` replays a counterexample before it is shown (BRIEF section 5);
- ``Simulator.explore`` enumerates every schedule of a small graph (brute force), which the
  property tests compare with the solver's verdicts.

Emits no diagnostics; returns ``Violation`` records.
"""

from __future__ import annotations

from collections.abc import Iterator

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Code
from fxverify.replay import closure, defined_rules, map_reads, schedule_rules, static_rules
from fxverify.replay.world import Schedule, Violation, World

__all__ = ["Schedule", "Simulator", "Violation"]


class Simulator(World):
    """Concrete executions of one policy: the rules on one schedule (``run``), the rules that hold
    in every schedule (``static``), replay of a counterexample (``confirm``) and brute force over
    every schedule of a small graph (``explore``)."""

    def run(self, sched: Schedule, only: Code | None = None) -> list[Violation]:
        """Every violation the schedule exhibits among its edges (sorted, deterministic); with
        ``only``, those of that code (``schedule_rules.violations``)."""
        return schedule_rules.violations(self, sched, only)

    def read_values(self, sched: Schedule, bits: dict[str, int] | None = None
                    ) -> dict[tuple[int, int], frozenset[int] | None]:
        """The values each plain read (``map_read``, ``aggregate``) of ``sched`` may observe under
        its map's consistency class: ``(edge id, map-operation position) -> values`` (``None``
        where undefined or too large to enumerate). ``bits``: map name -> slot width the values
        wrap at. The rule and its sources: ``map_reads`` (``specs/obligations.md`` "Maps")."""
        return map_reads.read_values(self, sched, bits)

    def static(self) -> list[Violation]:
        """Violations that hold in every schedule: bounds, alias sets, in-place legality, transform
        sizes, checksum chains, dtypes, fabric paths, hooks and map classes."""
        return static_rules.violations(self)

    def close(self, sched: Schedule) -> tuple[Schedule, tuple[tuple[int, ...], ...]]:
        """``sched`` with every HB ancestor of its edges timed too, and those ancestors in groups,
        one per gap of the timeline (``closure.close``). Raises ``ValueError`` when ``sched`` is
        not a legal schedule."""
        return closure.close(self, sched)

    # -- replay and brute force ----------------------------------------------------------------
    def confirm(self, code: Code, edges: tuple[int, ...], sched: Schedule, address: int | None = None,
                values: dict[str, int | str] | None = None, other: Schedule | None = None) -> Violation | None:
        """Replay a counterexample: ``sched`` (and ``other``, the second schedule of a final owner
        that differs between schedules), the shared byte ``address`` and named ``values`` (for a
        finding about two regions, FX-ALIAS-001 with no edge, ``values["regions"]`` names them as
        ``"A|B"``, and ``address`` must lie in both). Returns
        the matching violation the simulator observes, or ``None`` when the witness does not exhibit
        ``code`` (which is an internal error upstream)."""
        values = values or {}
        if code == codes.ORD_001:
            cyc = list(edges)
            ok = len(cyc) > 0 and all(cyc[i - 1] in self.preds[cyc[i]] for i in range(len(cyc)))
            return Violation(code, tuple(cyc)) if ok else None
        if code == codes.OWN_005 and "declared" in values:
            if self.check_schedule(sched):
                return None
            region = str(values["region"])
            finals = self.final_owners(region, sched)
            return Violation(code, edges, detail=region) if any(d != values["declared"] for d in finals) else None
        if code == codes.OWN_005 and other:
            if self.check_schedule(sched) or self.check_schedule(other):
                return None
            region = str(values["region"])
            a, b = self.final_owners(region, sched), self.final_owners(region, other)
            return Violation(code, edges, detail=region) if a != b or len(a) > 1 else None
        if sched:
            if self.check_schedule(sched) is not None:
                return None
            if code == codes.INIT_001 and address is not None and edges:
                # the byte the witness names, which need not be the lowest one ``run`` reports
                return defined_rules.undefined_at(self, sched, edges[0], address)
            found = self.run(sched, code)
        else:
            found = [v for v in self.static() if v.code == code]
        want = set(edges)
        if code == codes.ALIAS_001 and not edges and "regions" in values:
            # two regions in different alias sets: the same two, and the witness byte in both
            # (INVARIANT: both sides write the pair as "A|B", ``static_rules._alias_sets``'s detail)
            pair = set(str(values["regions"]).split("|"))
            return next((v for v in found if not v.edges and set(v.detail.split("|")) == pair
                         and address is not None and all(self._region_holds(r, address) for r in pair)), None)
        if code == codes.ORD_003:
            # a persisted write's violation names the writer alone: it confirms only its own kind
            found = [v for v in found if (v.rule == "persist") == ("persisted" in values)]
        if code == codes.INIT_001:
            # the read is the obligation's first edge; the others are its writers, whose own reads
            # may see bytes of writers outside the witness
            return next((v for v in found if v.edges == tuple(edges[:1]) and (address is None or v.address == address)), None)
        for v in found:
            if set(v.edges) <= want and (address is None or v.address is None or self._addr_ok(v, address)):
                return v
        return None

    def _region_holds(self, region: str, address: int) -> bool:
        """True when byte ``address`` lies in region ``region`` (``[base, base + size)``)."""
        r = self.policy.region(region)
        return r.base <= address < r.end

    def _addr_ok(self, v: Violation, address: int) -> bool:
        accs = [x.footprint for e in v.edges for x in self.policy.edges[e].accesses()]
        return any(fp.contains(address) for fp in accs) or v.address == address

    def linear_extensions(self, ids: list[int]) -> Iterator[Schedule]:
        """Every schedule of ``ids`` with distinct integer times, up to order isomorphism: all
        interleavings of the 2n endpoints with ``s(e)`` before ``f(e)`` and HB respected."""
        n = len(ids)
        started: dict[int, int] = {}
        finished: dict[int, int] = {}
        pos = [0]

        def rec() -> Iterator[Schedule]:
            if len(finished) == n:
                yield {e: (started[e], finished[e]) for e in ids}
                return
            t = pos[0]
            for e in ids:
                if e not in started:
                    if all(a in finished for a in self.ancestors(e) if a in ids):
                        started[e] = t
                        pos[0] += 1
                        yield from rec()
                        pos[0] -= 1
                        del started[e]
                elif e not in finished:
                    finished[e] = t
                    pos[0] += 1
                    yield from rec()
                    pos[0] -= 1
                    del finished[e]

        yield from rec()

    def explore(self) -> set[str]:
        """Brute force: the set of codes violated in some schedule of the whole policy (plus the
        schedule-independent ones). Exponential: meant for graphs of a handful of edges."""
        return {code for code, _edges in self.explore_violations()}

    def explore_violations(self) -> set[tuple[Code, tuple[int, ...]]]:
        """Brute force, like ``explore``, keeping who is to blame: every ``(code, edges)`` pair
        violated in some schedule or in all of them (``edges`` in the violation's role order;
        empty for a final owner that depends on the schedule)."""
        found = {(v.code, v.edges) for v in self.static()}
        if any(code == codes.ORD_001 for code, _ in found):
            return found
        ids = list(range(len(self.policy.edges)))
        finals: dict[str, set[frozenset[str]]] = {}
        handed = {ho.region for e in self.policy.edges for ho in e.handoffs} | {a.region for e in self.policy.edges for a in e.allocs}
        regions = {r.name for r in self.policy.regions if self.movers(r.name) & handed}
        for sched in self.linear_extensions(ids):
            found |= {(v.code, v.edges) for v in self.run(sched)}
            for r in regions:
                finals.setdefault(r, set()).add(frozenset(self.final_owners(r, sched)))
        declared = {fo.region for fo in self.policy.final_owners}
        for r, outcomes in finals.items():
            if r in declared:
                continue
            multi = sum(1 for e in self.policy.edges if self.owner_set(e, r) is not None) > 1
            if multi and (len(outcomes) > 1 or any(len(o) > 1 for o in outcomes)):
                found.add((codes.OWN_005, ()))
        return found
