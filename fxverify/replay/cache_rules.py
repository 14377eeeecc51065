"""The simulator's rules for ordering across hosts, on one concrete schedule: reads of
non-coherent memory that see a stale line (FX-ORD-005) and notifications sent while a transfer they
report is in flight (FX-ORD-006).

Written from the cache model of ``specs/obligations.md`` section 1 ("Non-coherent shared memory"),
not from the SMT encoding: per byte of a ``noncoherent`` space it tracks when the writer's dirty
line reaches memory (the first write-back by the writer's device, started after the store
finished, completes) and when the reader's cache last dropped the line (the latest invalidate by
the reader's device that completes before the read, its start being the earliest moment the line
may be refetched; the reader's own invalidate drops it as the read starts). The read sees the
store when the line reached memory no later than the reader's last drop. Hosts are devices of kind
``cpu``, ``gpu`` or ``npu``. Emits no diagnostics.
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
    hosts = {d.name for d in wd.policy.devices if d.kind in _HOSTS}
    for w in ids:
        ew = E[w]
        if ew.device not in hosts:
            continue
        for xw in ew.accesses():
            if xw.mode is AccessMode.READ or xw.footprint.space not in shared:
                continue
            for r in ids:
                er = E[r]
                if er.device == ew.device or er.device not in hosts or sched[w][1] > sched[r][0]:
                    continue
                for xr in er.accesses():
                    if xr.mode is AccessMode.WRITE:
                        continue
                    addr = _stale_byte(wd, ids, sched, w, r, xw.footprint, xr.footprint)
                    if addr is not None:
                        out.append(Violation(codes.ORD_005, (w, r), sched[r][0], addr, "stale line"))
    return out


def _stale_byte(wd: World, ids: list[int], sched: Schedule, w: int, r: int, fw: Footprint, fr: Footprint) -> int | None:
    """The lowest byte both footprints touch whose line the reader may still hold stale. Only the
    bytes where a write-back or invalidate footprint of the two devices begins or ends can change
    the answer, so those (and each shared interval's first byte) are the ones tried."""
    E = wd.policy.edges
    devs = (E[w].device, E[r].device)
    cuts = [fp for x in ids if E[x].device in devs for fp in E[x].writebacks + E[x].invalidates if fp.space == fw.space]
    for lo, hi in intersections(fw, fr):
        tries = {lo} | {p for fp in cuts for a, b in elements(fp, lo, hi) for p in (a, b) if lo <= p < hi}
        for a in sorted(tries):
            if _in_memory(wd, ids, sched, w, fw.space, a) > _dropped(wd, ids, sched, r, fw.space, a):
                return a
    return None


def _in_memory(wd: World, ids: list[int], sched: Schedule, w: int, space: str, a: int) -> float:
    """When the line of byte ``a`` of ``space`` written by ``w`` reaches memory: the earliest
    finish (ns) of a write-back of it (in that space: another space at the same addresses is other
    memory) by ``w``'s device that starts once ``w`` has finished (``w``'s own: when it finishes);
    never without one."""
    E = wd.policy.edges
    dev = E[w].device
    times = [sched[x][1] for x in ids if E[x].device == dev and (x == w or sched[w][1] <= sched[x][0])
             and any(fp.space == space and fp.contains(a) for fp in E[x].writebacks)]
    return min(times, default=_NEVER)


def _dropped(wd: World, ids: list[int], sched: Schedule, r: int, space: str, a: int) -> float:
    """The latest time (ns) before ``r``'s read at which ``r``'s device dropped the line of byte
    ``a`` of ``space`` (an invalidate of it in that space starts: it may be refetched right after);
    ``-inf`` when it never did, so the line may be cached from before the flow."""
    E = wd.policy.edges
    dev = E[r].device
    times = [sched[y][0] for y in ids if E[y].device == dev and (y == r or sched[y][1] <= sched[r][0])
             and any(fp.space == space and fp.contains(a) for fp in E[y].invalidates)]
    return max(times, default=-_NEVER)
