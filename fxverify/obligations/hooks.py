"""Fabric and hook obligations: FX-HOOK-001 (no fabric path, or the driving device is not on it)
and FX-HOOK-002 (an undeclared hook drives an edge).

Takes a ``Context``; yields ``Obligation`` objects. Paths use the cut encoding of
``obligations.fabric``: the bytes go from the source's device to the destination's device, and the
driving device must lie on a path between them (for a ``write``: from the driver to the
destination's device; for a ``read``: from the source's device to the driver).
"""

from __future__ import annotations

from collections.abc import Iterator

from fxverify.certificate import DeclaredHook, Evidence, LinkEndpoint
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import nearest
from fxverify.edits import AddLink, DeclareHook, Drive, Hint, drive, hint
from fxverify.ir import Edge
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.parametric import Held, ProvedTogether
from fxverify.obligations.fabric import CutObligation
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import eq, int_var, not_, or_
from fxverify.vocab import DeviceKind


class NoPath(CutObligation):
    """FX-HOOK-001: a fabric path joins the transfer's endpoints through its driving device."""

    schedule_free = True

    code = codes.HOOK_001

    def message(self, w: Witness) -> str:
        e = self.name(self.edges[0])
        if self.via and self.via not in (self.src_dev, self.dst_dev):
            return f"`{e}` is driven by `{self.via}`, which has no fabric path between `{self.src_dev}` and `{self.dst_dev}`"
        return f"`{e}` moves bytes from `{self.src_dev}` to `{self.dst_dev}` but no fabric path joins them"

    def why(self, w: Witness) -> str:
        src = str(w.values.get("from"))
        reach = ", ".join(f"`{d}`" for d in sorted(self.reachable_from(src)))
        return f"the devices reachable from `{src}` are {{{reach}}}, which leaves out `{w.values.get('to')}`"

    def fix(self, w: Witness) -> Hint:
        """A link across the cut, or the edge driven from its source's or its destination's
        device (at a hook of the same name when that device declares one)."""
        a, b = str(w.values.get("from")), str(w.values.get("to"))
        pol, e = self.ctx.policy, self.ctx.edge(self.edges[0])
        kinds = {pol.device(a).kind, pol.device(b).kind}
        link = AddLink(a, b, "cxl" if kinds & {DeviceKind.CXL_MEM, DeviceKind.CXL_SWITCH} else "pcie")
        drivers = [drive(pol, e.name, d, e.hook) for d in dict.fromkeys((self.src_dev, self.dst_dev)) if d != e.device]
        return hint(link, *drivers)


class UndeclaredHook(Obligation):
    """FX-HOOK-002: the hook that drives an edge is declared on its device."""

    schedule_free = True
    unique_key = True  # one per edge, edge names are unique, and no other class has the code

    code = codes.HOOK_002

    def __init__(self, ctx: Context, e: Edge) -> None:
        self.dev = ctx.policy.device(e.device)
        super().__init__(ctx, (e.eid,), f"{self.code}:{e.name}", e.hook_span if e.hook_span.end else e.span)

    def prove_fast(self) -> str | None:
        return "declared" if self.ctx.edge(self.edges[0]).hook in self.dev.hooks else None

    def evidence(self) -> Evidence | None:
        return DeclaredHook(self.dev.name, self.ctx.edge(self.edges[0]).hook) if self.prove_fast() else None

    def encode(self) -> Query:
        e = self.ctx.edge(self.edges[0])
        universe = sorted(set(self.dev.hooks) | {e.hook})
        h = int_var("hook")
        declared = or_(*[eq(h, universe.index(x)) for x in self.dev.hooks])
        header = self.header() + tuple(f"hook {i} = {x}" for i, x in enumerate(universe))
        return Query(self.key, (("used_hook", eq(h, universe.index(e.hook))), ("undeclared", not_(declared))), header=header)

    def witness(self, result: Result) -> Witness:
        return Witness(values={"hook": self.ctx.edge(self.edges[0]).hook, "device": self.dev.name})

    def message(self, w: Witness) -> str:
        e = self.ctx.edge(self.edges[0])
        return f"`{e.name}` is driven by `{e.device}.{e.hook}`, but `{e.device}` declares no hook `{e.hook}`"

    def why(self, w: Witness) -> str:
        hooks = ", ".join(self.dev.hooks) or "none"
        return f"`{self.dev.name}` declares hooks [{hooks}]; a policy program can run only at a declared hook"

    def fix(self, w: Witness) -> Hint:
        """The declared hook of the nearest name, or the hook declared on the device."""
        e = self.ctx.edge(self.edges[0])
        near = nearest(e.hook, self.dev.hooks)
        return hint(Drive(e.name, e.device, near) if near else None, DeclareHook(e.device, e.hook))


class FlushDriver(Obligation):
    """FX-HOOK-001 for flushes: a link can be flushed only from a device at one of its ends."""

    code = codes.HOOK_001
    schedule_free = True

    def __init__(self, ctx: Context, e: Edge, link: str) -> None:
        self.link = ctx.policy.link(link)
        super().__init__(ctx, (e.eid,), f"{self.code}:{e.name}:flush:{link}", e.span)

    def prove_fast(self) -> str | None:
        return "link-endpoint" if self.ctx.edge(self.edges[0]).device in (self.link.a, self.link.b) else None

    def evidence(self) -> Evidence | None:
        return LinkEndpoint(self.link.name, self.ctx.edge(self.edges[0]).device) if self.prove_fast() else None

    def encode(self) -> Query:
        ids = {d.name: i for i, d in enumerate(self.ctx.policy.devices)}
        dev = int_var("flushing_device")
        cons = (("flushing_device", eq(dev, ids[self.ctx.edge(self.edges[0]).device])),
                ("not_an_endpoint", not_(or_(eq(dev, ids[self.link.a]), eq(dev, ids[self.link.b])))))
        return Query(self.key, cons, header=self.header())

    def witness(self, result: Result) -> Witness:
        return Witness(values={"link": self.link.name, "device": self.ctx.edge(self.edges[0]).device})

    def message(self, w: Witness) -> str:
        e = self.ctx.edge(self.edges[0])
        return f"`{e.name}` flushes link `{self.link.name}` from `{e.device}`, which is not at either end of it"

    def why(self, w: Witness) -> str:
        return f"a flush drains the posted writes queued between `{self.link.a}` and `{self.link.b}`; only they can issue it"

    def fix(self, w: Witness) -> Hint:
        """The flush driven from a device at an end of the link."""
        e = self.ctx.edge(self.edges[0])
        return hint(*[drive(self.ctx.policy, e.name, d, e.hook) for d in (self.link.a, self.link.b)])


def generate(ctx: Context) -> Iterator[Obligation | ProvedTogether]:
    """Yield every hook obligation of ``ctx.policy``; path obligations are deduplicated per edge
    family and endpoint triple, since every instance shares the answer."""
    g = ctx.graph
    path_seen: set[tuple[str, str, str, str]] = set()
    proved = ctx.parametric.proved_hooks() if ctx.parametric is not None else set()
    held = Held()
    for e in ctx.policy.edges:
        if proved and e.span in proved:
            yield from held.hold(f"{codes.HOOK_002}:{e.name}", codes.HOOK_002)
        else:
            yield from held.flush()
            yield UndeclaredHook(ctx, e)
        more: list[Obligation] = [FlushDriver(ctx, e, ln) for ln in e.flushes]
        if e.src is not None or e.dst is not None:
            src, dst = g.transfer_endpoints(e)
            key = (e.family, src, dst, e.device)
            if key not in path_seen:
                path_seen.add(key)
                more.append(NoPath(ctx, e, src, dst, allowed=lambda ln: True, key_extra=f"{src}>{e.device}>{dst}", via=e.device))
        if more:
            yield from held.flush()
            yield from more
    yield from held.flush()
