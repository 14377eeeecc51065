"""The simulator's rules for ordering across hosts, on one concrete schedule: reads of
non-coherent memory that see a stale line (FX-ORD-005) and notifications sent while a transfer they
report is in flight (FX-ORD-006).

Written from the cache model of ``specs/obligations.md`` section 1 ("Non-coherent shared memory"),
not from the SMT encoding: per byte of a ``noncoherent`` space it tracks when the writer's dirty
line reaches memory (the first write-back by the writer's cache's host, started after the store
finished, completes; a write by a device that reaches the memory itself lands when it finishes)
and when the reader's cache last dropped the line (the latest invalidate by the reader's cache's
host that completes before the read, its start being the earliest moment the line may be
refetched; the reader's own invalidate drops it as the read starts; a device that reads the
memory itself sees it as the read starts). The read sees the store when the line reached memory
no later than the reader's last drop. Hosts are devices of kind ``cpu``, ``gpu`` or ``npu``; a
device of another kind reads and writes the memory itself or through the cache of the host whose
root port it sits behind (``_sides``). Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.diagnostics import codes
from fxverify.ir import AccessMode, Footprint
from fxverify.replay.footprints import elements, intersections
from fxverify.replay.world import Schedule, Violation, World
from fxverify.vocab import DeviceKind

_HOSTS = (DeviceKind.CPU, DeviceKind.GPU, DeviceKind.NPU)
_NEVER = float("inf")


def violations(wd: World, ids: list[int], sched: Schedule) -> list[Violation]:
    """Every FX-ORD-005 and FX-ORD-006 violation of ``sched`` among ``ids``."""
    out: list[Violation] = []
    E = wd.policy.edges
    by_name = {e.name: e.eid for e in E}
    for n in ids:
        for name in E[n].notifies:
            t = by_name[name]
            if t in sched and sched[n][0] < sched[t][1]:
                out.append(Violation(codes.ORD_006, (t, n), sched[n][0], None, f"{name} in flight"))
    shared = {s.name for s in wd.policy.spaces if s.noncoherent}
    if not shared:
        return out
    for w in ids:
        ew = E[w]
        for xw in ew.accesses():
            if xw.mode is AccessMode.READ or xw.footprint.space not in shared:
                continue
            for r in ids:
                er = E[r]
                if r == w or sched[w][1] > sched[r][0]:
                    continue
                for xr in er.accesses():
                    if xr.mode is AccessMode.WRITE:
                        continue
                    space = xw.footprint.space
                    for a in _sides(wd, ew.device, space):
                        for b in _sides(wd, er.device, space):
                            if a == b:
                                continue  # one cache, or memory on both sides: coherent with itself
                            addr = _stale_byte(wd, ids, sched, w, r, a, b, xw.footprint, xr.footprint)
                            if addr is not None:
                                out.append(Violation(codes.ORD_005, (w, r), sched[r][0], addr, "stale line"))
    return out


def _sides(wd: World, dev: str, space: str) -> set[str | None]:
    """Where an access by ``dev`` to ``space`` may be served: its own cache for a host (``dev``);
    for a device without one, ``None`` (the memory itself) when it is the memory's device or
    reaches it by a chain of links through devices that are neither hosts nor the memory's device
    (which is no host), and each host such a chain meets first that is the memory's device or
    reaches it without passing through ``dev`` (its accesses go through that host's root port and
    snoop its cache). Written from specs/obligations.md section 1, by a depth-first search over
    the links."""
    hosts = {d.name for d in wd.policy.devices if d.kind in _HOSTS}
    home = wd.policy.space(space).device
    if dev in hosts:
        return {dev}
    if dev == home:
        return {None}
    found: set[str | None] = set()
    seen, stack = {dev}, [dev]
    while stack:
        u = stack.pop()
        for ln in wd.policy.links:
            if u not in (ln.a, ln.b):
                continue
            x = ln.b if u == ln.a else ln.a
            if x == home:
                found.add(home if home in hosts else None)
            elif x in hosts:
                if _joins(wd, x, home, dev):
                    found.add(x)
            elif x not in seen:
                seen.add(x)
                stack.append(x)
    return found or {None}


def _joins(wd: World, src: str, dst: str, banned: str) -> bool:
    """True when some chain of links leads from device ``src`` to ``dst`` avoiding ``banned``."""
    seen, stack = {src, banned}, [src]
    while stack:
        u = stack.pop()
        if u == dst:
            return True
        for ln in wd.policy.links:
            for p, q in ((ln.a, ln.b), (ln.b, ln.a)):
                if p == u and q not in seen:
                    seen.add(q)
                    stack.append(q)
    return False


def _stale_byte(wd: World, ids: list[int], sched: Schedule, w: int, r: int, a: str | None, b: str | None,
                fw: Footprint, fr: Footprint) -> int | None:
    """The lowest byte both footprints touch that the read, served from side ``b``, may see stale
    when the write went to side ``a`` (``None``: the memory). Only the bytes where a write-back or
    invalidate footprint of the two sides begins or ends can change the answer, so those (and each
    shared interval's first byte) are the ones tried."""
    E = wd.policy.edges
    devs = {a, b} - {None}
    cuts = [fp for x in ids if E[x].device in devs for fp in E[x].writebacks + E[x].invalidates if fp.space == fw.space]
    for lo, hi in intersections(fw, fr):
        tries = {lo} | {p for fp in cuts for c, d in elements(fp, lo, hi) for p in (c, d) if lo <= p < hi}
        for addr in sorted(tries):
            if _in_memory(wd, ids, sched, w, a, fw.space, addr) > _dropped(wd, ids, sched, r, b, fw.space, addr):
                return addr
    return None


def _in_memory(wd: World, ids: list[int], sched: Schedule, w: int, side: str | None, space: str, a: int) -> float:
    """When the byte ``a`` of ``space`` that ``w`` wrote reaches memory: when ``w`` finishes if
    it wrote the memory itself (``side`` is ``None``); else the earliest finish (ns) of a write-back
    of it (in that space: another space at the same addresses is other memory) by the host
    ``side``, on an edge that starts once ``w`` has finished (``w``'s own: when it finishes);
    never without one."""
    E = wd.policy.edges
    if side is None:
        return sched[w][1]
    times = [sched[x][1] for x in ids if E[x].device == side and (x == w or sched[w][1] <= sched[x][0])
             and any(fp.space == space and fp.contains(a) for fp in E[x].writebacks)]
    return min(times, default=_NEVER)


def _dropped(wd: World, ids: list[int], sched: Schedule, r: int, side: str | None, space: str, a: int) -> float:
    """The latest time (ns) before ``r``'s read from which it sees memory for byte ``a`` of
    ``space``: its own start when it reads the memory itself (``side`` is ``None``); else when the
    host ``side`` last dropped the line (an invalidate of it in that space starts: it may be
    refetched right after), on ``r`` itself or an edge that finished before ``r`` starts; ``-inf``
    when it never did, so the line may be cached from before the flow."""
    E = wd.policy.edges
    if side is None:
        return sched[r][0]
    times = [sched[y][0] for y in ids if E[y].device == side and (y == r or sched[y][1] <= sched[r][0])
             and any(fp.space == space and fp.contains(a) for fp in E[y].invalidates)]
    return max(times, default=-_NEVER)
