"""Edits of ownership, lifetimes, drivers and the fabric: leases, handoffs, releases, ``pooled``,
final owners, the hook that drives an edge, declared hooks and links (specs/language.md,
"Fabric", "Clauses", "Final owner"). Each is a function on the IR (``base.Edit``); none emits
diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fxverify.edits.base import Edit, edge_of, rebuilt, region_of, with_edge, with_family
from fxverify.ir import FinalOwner, Handoff, Lease, Link, Policy
from fxverify.vocab import LinkOrder


@dataclass(frozen=True)
class AddLease(Edit):
    """``add `lease R to D` to `E```: when edge ``edge`` finishes, ``device`` may read ``region``
    (FX-OWN-001). Does not apply when the edge revokes the region (``resolve`` rejects both)."""

    edge: str
    region: str
    device: str

    def text(self) -> str:
        return f"add `lease {self.region} to {self.device}` to `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or region_of(policy, self.region) is None or not policy.has("device", self.device):
            return None
        if any(x.region == self.region for x in e.revokes) or any((x.region, x.device) == (self.region, self.device) for x in e.leases):
            return None
        return with_edge(policy, replace(e, leases=e.leases + (Lease(self.region, self.device),)))


@dataclass(frozen=True)
class AddHandoff(Edit):
    """``add `handoff R: A -> B` to `E```: ownership of ``region`` passes from ``src`` to ``dst``
    when edge ``edge`` finishes. Does not apply to an edge that allocates the region."""

    edge: str
    region: str
    src: str
    dst: str

    def text(self) -> str:
        return f"add `handoff {self.region}: {self.src} -> {self.dst}` to `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or region_of(policy, self.region) is None or any(a.region == self.region for a in e.allocs):
            return None
        if not (policy.has("device", self.src) and policy.has("device", self.dst)) or self.src == self.dst:
            return None
        return with_edge(policy, replace(e, handoffs=e.handoffs + (Handoff(self.region, self.src, self.dst),)))


@dataclass(frozen=True)
class DropHandoff(Edit):
    """``drop `handoff R: A -> B` from `E```."""

    edge: str
    region: str
    src: str
    dst: str

    def text(self) -> str:
        return f"drop `handoff {self.region}: {self.src} -> {self.dst}` from `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None:
            return None
        keep = tuple(h for h in e.handoffs if (h.region, h.src, h.dst) != (self.region, self.src, self.dst))
        return None if len(keep) == len(e.handoffs) else with_edge(policy, replace(e, handoffs=keep))


@dataclass(frozen=True)
class Rehand(Edit):
    """``change `handoff R: A -> B` on `E` to `handoff R: C -> B```: the clause gives the region
    away from ``new`` (the owner it has then) instead of ``src``, in its place among the edge's
    clauses."""

    edge: str
    region: str
    src: str
    new: str
    dst: str

    def text(self) -> str:
        return (f"change `handoff {self.region}: {self.src} -> {self.dst}` on `{self.edge}` to "
                f"`handoff {self.region}: {self.new} -> {self.dst}`")

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or self.new == self.dst or not policy.has("device", self.new):
            return None
        old = (self.region, self.src, self.dst)
        at = next((i for i, h in enumerate(e.handoffs) if (h.region, h.src, h.dst) == old), None)
        if at is None:
            return None
        hs = list(e.handoffs)
        hs[at] = replace(hs[at], src=self.new)
        return with_edge(policy, replace(e, handoffs=tuple(hs)))


@dataclass(frozen=True)
class DropRelease(Edit):
    """``drop `release R` from `E```: a release clause goes (not the action of a ``release``
    edge, which would leave an edge that does nothing: delete that edge instead)."""

    edge: str
    region: str

    def text(self) -> str:
        return f"drop the `release {self.region}` clause of `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None:
            return None
        keep = tuple(r for r in e.releases if r.region != self.region)
        if len(keep) == len(e.releases) or (not keep and e.src is None and e.dst is None):
            return None
        return with_edge(policy, replace(e, releases=keep))


@dataclass(frozen=True)
class Pooled(Edit):
    """``declare `R` `pooled```: region family ``family`` starts unallocated, in its pool."""

    family: str

    def text(self) -> str:
        return f"declare region `{self.family}` `pooled`"

    def apply(self, policy: Policy) -> Policy | None:
        return with_family(policy, self.family, pooled=True)


@dataclass(frozen=True)
class SetFinalOwner(Edit):
    """``declare `final owner R = D```, replacing a declaration of ``region`` already there."""

    region: str
    device: str

    def text(self) -> str:
        return f"declare `final owner {self.region} = {self.device}`"

    def apply(self, policy: Policy) -> Policy | None:
        if region_of(policy, self.region) is None or not policy.has("device", self.device):
            return None
        old = [fo for fo in policy.final_owners if fo.region == self.region]
        if any(fo.device == self.device for fo in old):
            return None
        keep = tuple(fo for fo in policy.final_owners if fo.region != self.region)
        span = old[0].span if old else policy.region(self.region).span
        return rebuilt(policy, final_owners=keep + (FinalOwner(self.region, self.device, span),))


@dataclass(frozen=True)
class Drive(Edit):
    """``drive `E` by `D.H```: edge ``edge`` runs at hook ``hook`` of ``device`` (declared there)."""

    edge: str
    device: str
    hook: str

    def text(self) -> str:
        return f"drive `{self.edge}` by `{self.device}.{self.hook}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or not policy.has("device", self.device) or self.hook not in policy.device(self.device).hooks:
            return None
        if (e.device, e.hook) == (self.device, self.hook):
            return None
        return with_edge(policy, replace(e, device=self.device, hook=self.hook))


def drive(policy: Policy, edge: str, device: str, prefer: str) -> Drive | None:
    """``Drive`` of ``edge`` from ``device`` at hook ``prefer`` when it declares one of that name,
    else its first hook; ``None`` when it declares none."""
    hooks = policy.device(device).hooks
    if not hooks:
        return None
    return Drive(edge, device, prefer if prefer in hooks else hooks[0])


@dataclass(frozen=True)
class DeclareHook(Edit):
    """``add `H` to the hooks of `D```."""

    device: str
    hook: str

    def text(self) -> str:
        return f"add `{self.hook}` to the hooks of `{self.device}`"

    def apply(self, policy: Policy) -> Policy | None:
        if not policy.has("device", self.device) or self.hook in policy.device(self.device).hooks:
            return None
        d = policy.device(self.device)
        devices = tuple(replace(d, hooks=d.hooks + (self.hook,)) if x.name == d.name else x for x in policy.devices)
        return rebuilt(policy, devices=devices)


@dataclass(frozen=True)
class AddLink(Edit):
    """``declare `link A -- B : KIND ORDER```: a fabric link joins ``a`` and ``b``."""

    a: str
    b: str
    kind: str
    order: LinkOrder = LinkOrder.ORDERED

    def text(self) -> str:
        return f"declare `link {self.a} -- {self.b} : {self.kind} {self.order.value}`"

    def apply(self, policy: Policy) -> Policy | None:
        if not (policy.has("device", self.a) and policy.has("device", self.b)) or self.a == self.b:
            return None
        name = f"{self.a}--{self.b}"
        if policy.has("link", name) or policy.has("link", f"{self.b}--{self.a}"):
            return None
        return rebuilt(policy, links=policy.links + (Link(name, self.a, self.b, self.kind, self.order),))
