"""Checks of the FX-ORD-003 certificates that rest on one fabric route (specs/obligations.md
section 1, posted rule; PCIe Base Specification, section 2.4.1, transaction ordering rules):
``same-requester`` (the writer's device reads its bytes back along the write's one route),
``notified`` (a completion entry written after the write along its one path into host memory,
which the reader waits for), ``read-back-after`` (a read-back that pushes a persisted write),
``read-back-between`` (a read-back that pushes a write before its reader reads it) and
``host-read-between`` (the host reads the writer's device, whose completion pushes the write).

Each check recomputes the devices, the spaces' homes and the routes from the IR (a route is the
only one when no other link lies on a simple fabric path between its ends: ``static.on_simple_path``),
checks the HB paths step by step, and states the property for ``--certify smt``. Emits no
diagnostics.
"""

from __future__ import annotations

from fxverify.certificate import Certificate, HostReadBetween, Notified, ReadBackAfter, ReadBackBetween, SameRequester
from fxverify.certify.facts import Facts, Statement, f, key_body, s, split_ref, two_accesses
from fxverify.certify.order import persisted_write
from fxverify.certify.static import constants, on_simple_path
from fxverify.diagnostics import codes
from fxverify.ir import AccessMode, Edge, Footprint
from fxverify.smt.terms import and_, not_
from fxverify.vocab import (ENTRY_BLOCK_HOST, ENTRY_BLOCK_OTHER, ENTRY_KINDS, NETWORK_KINDS, READ_BACK_KINDS, DeviceKind,
                            LinkOrder)


def _one_route(facts: Facts, st: Statement, e: Edge, route: tuple[str, ...], device: str) -> bool:
    """True when ``route`` (link names in order from ``device``) is the only route that can carry
    ``e``'s bytes: its ``via`` links, or, without one, ``_only_path`` between its endpoints."""
    u, v = facts.endpoints(e)
    other = v if u == device else u
    if e.via is not None:
        return _walks(facts, st, route, device, other) and st.need(
            set(e.via) == set(route), f"`{e.name}` is pinned to another route")
    return _only_path(facts, st, route, device, other, f"`{e.name}`")


def _leg(facts: Facts, st: Statement, e: Edge, route: tuple[str, ...], device: str, home: str) -> bool:
    """True when ``route`` (link names in order from ``device``, ``e``'s driver) is the only route
    of ``e``'s traffic between ``device`` and ``home``: ``_one_route`` when ``e``'s transfer joins
    the two; for a copy inside ``home``'s memory that ``device``'s engine makes, that no other
    link lies on a simple path between the two (``_only_path``); for a third-party transfer
    (``device`` at neither end, ``home`` at one), its ``via``, or without one the only simple
    path between its ends (``_sole_path``) when one of its links at ``device`` is a network link
    (``vocab.NETWORK_KINDS``: ``device`` terminates the transport and its engine issues the
    memory requests), walked from the source's device through ``device``, whose part on
    ``home``'s side is ``route``. Any other third-party transfer that pins no route may also
    write over the links between its ends, so it has no one route."""
    u, v = facts.endpoints(e)
    if {u, v} == {device, home}:
        return _one_route(facts, st, e, route, device)
    if u == v == home != device:  # a copy inside the bytes' memory, by the device's engine
        return st.need(e.via is None, f"`{e.name}` pins a route") and _only_path(
            facts, st, route, device, home, f"`{e.name}`")
    if not st.need(u != v and device not in (u, v) and home in (u, v),
                   f"`{e.name}` does not move bytes between `{device}` and `{home}`, and is no third-party "
                   f"transfer through `{device}` from or to `{home}`"):
        return False
    via = e.via if e.via is not None else _sole_path(facts, st, e, u, v)
    if via is None or not _walks(facts, st, via, u, v):
        return False
    at, seen = u, [u]
    for name in via:
        ln = facts.policy.link(name)
        at = ln.b if at == ln.a else ln.a
        seen.append(at)
    if not st.need(device in seen, f"`{e.name}`'s route does not pass through `{device}`"):
        return False
    k = seen.index(device)
    if e.via is None and not st.need(
            any(facts.policy.link(n).kind in NETWORK_KINDS for n in via[max(0, k - 1):k + 1]),
            f"`{e.name}` pins no route and reaches `{device}` over memory links only: `{device}` may only have "
            "started a transfer that another device's engine makes"):
        return False
    part = via[k:] if home == v else via[:k][::-1]
    return _walks(facts, st, route, device, home) and st.need(
        set(part) == set(route), f"`{e.name}` is pinned to another route between `{device}` and `{home}`")


def _sole_path(facts: Facts, st: Statement, e: Edge, u: str, v: str) -> tuple[str, ...] | None:
    """The only simple fabric path from device ``u`` to ``v`` (``e``'s ends), link names in
    order, found from the links that lie on some simple path between the two
    (``on_simple_path``): there is one path exactly when those links form one, that is when each
    step from ``u`` has one unused link to take and the walk uses them all; ``None``, recorded
    in ``st``, when there are several or none."""
    on = [ln for ln in facts.policy.links if on_simple_path(facts, ln.name, u, v)]
    names: list[str] = []
    at = u
    while at != v:
        step = [ln for ln in on if at in (ln.a, ln.b) and ln.name not in names]
        if len(step) != 1:
            break
        names.append(step[0].name)
        at = step[0].b if at == step[0].a else step[0].a
    one = at == v and len(names) == len(on)
    st.need(one, f"`{e.name}` pins no route and its ends `{u}` and `{v}` have more than one path, or none")
    return tuple(names) if one else None


def _walks(facts: Facts, st: Statement, route: tuple[str, ...], start: str, end: str) -> bool:
    """True when ``route`` (link names) is a simple path from device ``start`` to ``end``."""
    at, seen = start, {start}
    for name in route:
        ln = facts.policy.link(name) if facts.policy.has("link", name) else None
        if not st.fact(ln is not None and at in (ln.a, ln.b), f"`{name}` is no link at `{at}`"):
            return False
        assert ln is not None
        at = ln.b if at == ln.a else ln.a
        if not st.fact(at not in seen, f"the route visits `{at}` twice"):
            return False
        seen.add(at)
    return st.fact(at == end, f"the route ends at `{at}`, not `{end}`")


def _only_path(facts: Facts, st: Statement, route: tuple[str, ...], start: str, end: str, who: str) -> bool:
    """True when ``route`` is a simple path from ``start`` to ``end`` beside which no link lies on
    a simple path between them (``on_simple_path``), so no other path exists; ``who`` names what
    would take the other link in the failure."""
    if not _walks(facts, st, route, start, end):
        return False
    strays = [ln.name for ln in facts.policy.links if ln.name not in route and on_simple_path(facts, ln.name, start, end)]
    return st.need(not strays, f"{who} may also take `{strays[0] if strays else ''}`")


def _keeps_order(facts: Facts, st: Statement, route: tuple[str, ...]) -> bool:
    """True when no link of ``route`` is ``unordered`` (it keeps no order, so nothing is ordered
    along the route: specs/obligations.md section 1, links and routes); records why not."""
    loose = [n for n in route if facts.policy.has("link", n) and facts.policy.link(n).order is LinkOrder.UNORDERED]
    return st.need(not loose, f"`{loose[0] if loose else ''}` on the route is `unordered`: it keeps no order")


def check_same_requester(facts: Facts, c: Certificate, ev: SameRequester) -> Statement:
    """``same-requester`` (FX-ORD-003): the writer's device reads the bytes back itself, either from
    its own memory (empty route) or along the one route both transfers can take, which holds the
    posted link: a read request does not pass posted writes along one path (PCIe Base
    Specification, section 2.4.1). The SMT statement takes the recomputed facts as constants."""
    st = Statement()
    bound = two_accesses(facts, c, st, codes.ORD_003, "a same-requester route", parts=3)
    if bound is None:
        return st
    w, r, aw, _ar = bound
    ew, er = facts.edges[w], facts.edges[r]
    refs = key_body(c.key).split("|")
    link = refs[2]
    st.fact(aw.mode is not AccessMode.READ, f"access {split_ref(refs[0])[1]} of {ew.name} writes nothing")
    same = st.fact(ew.device == ev.device and er.device == ev.device,
                   f"`{ew.name}` and `{er.name}` are not both driven by `{ev.device}`")
    home = next(sp.device for sp in facts.policy.spaces if sp.name == aw.footprint.space)
    if not ev.route:
        own = st.need(home == ev.device, f"the bytes are on `{home}`, not in `{ev.device}`'s own memory")
    else:
        own = st.fact(link in ev.route, f"the route does not cross the posted link `{link}`")
        own = _keeps_order(facts, st, ev.route) and own
        for e in (ew, er):
            own = _leg(facts, st, e, ev.route, ev.device, home) and own
    k = constants(st, {"same_device": same, "one_route_or_own_memory": own})
    st.violation = not_(and_(k["same_device"], k["one_route_or_own_memory"]))
    return st


def check_notified(facts: Facts, c: Certificate, ev: Notified) -> Statement:
    """``notified`` (FX-ORD-003): a completion entry makes the posted write visible to the reader
    (specs/obligations.md section 1, posted rule, completion entries). The key's accesses and
    link; the consumer names the notification in its own ``after`` clause and is driven by the
    device of the written bytes; no edge cancels either; the consumer is the reader or a path
    orders it before the reader. Either the notification is the writer itself, which
    ``notifies`` some edge and whose bytes lie in one naturally aligned block that a device writes
    as one posted request (``vocab.ENTRY_BLOCK_HOST`` bytes in a ``cpu``'s memory,
    ``vocab.ENTRY_BLOCK_OTHER`` elsewhere: its own bytes arrived whole when the consumer saw
    them: empty route, no path before), or it is another entry (its ``notifies`` names some
    edge), driven by the writer's device, writing into the bytes' device, which is a ``cpu``; the
    route is a simple path from the writer's device to it that holds the key's link, all of its
    links of a kind in ``vocab.ENTRY_KINDS`` (PCIe) and none ``unordered``, and the one
    route of both the writer's and the entry's traffic between the two (``_leg``: a ``via``, or
    a path beside which no link lies on a simple path between its ends); and the path orders
    the writer before the notification."""
    st = Statement()
    bound = two_accesses(facts, c, st, codes.ORD_003, "a completion entry", parts=3)
    if bound is None:
        return st
    w, r, aw, _ar = bound
    n, u = ev.notification, ev.consumer
    if not st.fact(0 <= n < len(facts.edges) and 0 <= u < len(facts.edges), "the notification or its consumer is no edge"):
        return st
    ew, en, eu = facts.edges[w], facts.edges[n], facts.edges[u]
    pol, d = facts.policy, ew.device
    home = next(sp.device for sp in pol.spaces if sp.name == aw.footprint.space)
    st.fact(aw.mode is not AccessMode.READ, f"`{ew.name}`'s access in the key writes nothing")
    st.fact(not facts.cancellers.get(n) and not facts.cancellers.get(u), f"`{en.name}` or `{eu.name}` is cancelled")
    st.fact(en.name in eu.after and eu.device == home, f"`{eu.name}` is no edge of `{home}` that waits for `{en.name}`")
    if ev.after is None:
        st.fact(u == r, f"`{eu.name}` is not the reader and no path orders it before the reader")
    else:
        facts.path(st, ev.after, u, r, "consumer to reader")
    st.edges.update({w, n, u, r})
    if n == w:
        st.fact(bool(ew.notifies) and not ev.route and ev.before is None,
                f"`{ew.name}` notifies nothing, or its own arrival carries a route or a path")
        block = ENTRY_BLOCK_HOST if pol.device(home).kind is DeviceKind.CPU else ENTRY_BLOCK_OTHER
        lo, hi = aw.footprint.lo, aw.footprint.hi
        whole = st.need(lo // block == (hi - 1) // block,
                        f"`{ew.name}`'s bytes [{lo:#x}, {hi:#x}) span more than one aligned {block}-byte block: a "
                        "reader that saw part of them may miss the rest")
        k = constants(st, {"one_request": whole})
        st.violation = not_(and_(k["one_request"], s(u) <= s(r)))
        return st
    st.fact(bool(en.notifies), f"`{en.name}` notifies nothing: it is no completion entry")
    st.fact(en.device == d, f"`{en.name}` is not driven by `{d}`, which issues `{ew.name}`'s writes")
    st.fact(en.dst is not None and next(sp.device for sp in pol.spaces if sp.name == en.dst.space) == home,
            f"`{en.name}` writes nothing into the memory of `{home}`")
    host = st.need(pol.device(home).kind is DeviceKind.CPU,
                   f"`{home}` is no host: its memory may take another device's posted writes out of order")
    st.fact(key_body(c.key).split("|")[2] in ev.route, "the route does not cross the key's posted link")
    one = _leg(facts, st, ew, ev.route, d, home)
    one = _leg(facts, st, en, ev.route, d, home) and one
    one = _keeps_order(facts, st, ev.route) and one
    other = [x for x in ev.route if not pol.has("link", x) or pol.link(x).kind not in ENTRY_KINDS]
    one = st.need(not other, f"posted writes are not taken to keep their order over `{', '.join(other)}` "
                  "(not a PCIe link)") and one
    facts.path(st, ev.before, w, n, "write to completion entry")
    fixed = constants(st, {"host_memory": host, "one_route": one})
    st.violation = not_(and_(fixed["host_memory"], fixed["one_route"], f(w) <= s(n), s(u) <= s(r)))
    return st


def check_read_back_after(facts: Facts, c: Certificate, ev: ReadBackAfter) -> Statement:
    """``read-back-after`` (FX-ORD-003, a persisted write): a read by the writer's own device from
    the device of the persisted bytes, over the one route both transfers can take (which crosses
    the key's posted link), starts after the write finished: the read request cannot pass the
    posted writes on that path (PCIe Base Specification, section 2.4.1), so its completion
    returns once they reached the device. No edge cancels the read (it might never be issued)."""
    st = Statement()
    bound = persisted_write(facts, c, st, "a read-back after a write")
    if bound is None:
        return st
    w, link = bound
    ew = facts.edges[w]
    x = ev.reader
    if not st.fact(ew.dst is not None, f"`{ew.name}` writes nothing"):
        return st
    pushes = _read_back(facts, st, ew, ew.dst, x, ev.route, ev.link, link)
    if pushes is None:
        return st
    st.edges.update({w, x})
    facts.path(st, ev.before, w, x, "write to read-back")
    k = constants(st, {"reads_back_over_the_route": pushes})
    st.violation = not_(and_(k["reads_back_over_the_route"], f(w) <= s(x)))
    return st


def check_read_back_between(facts: Facts, c: Certificate, ev: ReadBackBetween) -> Statement:
    """``read-back-between`` (FX-ORD-003, a read): a read-back as ``read-back-after`` has it, by
    the writer's device from the device of the bytes the key's writing access wrote, over the one
    route both take (which crosses the key's link), runs HB-after the writer and HB-before the
    reader: once it finished, the posted writes ahead of it are in memory, as after a flush."""
    st = Statement()
    bound = two_accesses(facts, c, st, codes.ORD_003, "a read-back between a write and a read", parts=3)
    if bound is None:
        return st
    w, r, aw, _ar = bound
    ew, link = facts.edges[w], key_body(c.key).split("|")[2]
    st.fact(aw.mode is not AccessMode.READ, f"`{ew.name}`'s access in the key writes nothing")
    x = ev.reader
    pushes = _read_back(facts, st, ew, aw.footprint, x, ev.route, ev.link, link)
    if pushes is None or not st.fact(x != r, "the read-back is the reader"):
        return st
    return _pushed_between(facts, st, ev, (w, x, r), "read-back", {"reads_back_over_the_route": pushes})


def _pushed_between(facts: Facts, st: Statement, ev: ReadBackBetween | HostReadBetween, wxr: tuple[int, int, int],
                    what: str, fact: dict[str, bool]) -> Statement:
    """Finish ``st`` for an edge ``x`` that pushed writer ``w``'s posted writes into memory before
    reader ``r`` (``wxr``): the paths ``ev.before`` (writer to ``x``) and ``ev.after`` (``x`` to
    reader), and the violation ``not (fact and f(w) <= s(x) and f(x) <= s(r))`` with the one
    recomputed ``fact`` (its name and value) as a constant. Returns ``st``."""
    w, x, r = wxr
    st.edges.update({w, x, r})
    facts.path(st, ev.before, w, x, f"write to {what}")
    facts.path(st, ev.after, x, r, f"{what} to read")
    (name, _), = fact.items()
    k = constants(st, fact)
    st.violation = not_(and_(k[name], f(w) <= s(x), f(x) <= s(r)))
    return st


def check_host_read_between(facts: Facts, c: Certificate, ev: HostReadBetween) -> Statement:
    """``host-read-between`` (FX-ORD-003, a read): edge ``reader`` is driven by the device of the
    bytes the key's writing access wrote, a ``cpu``, is cancelled by nobody, is not the key's
    reader, and reads from a space on the writer's device; the route is a simple path from the
    writer's device to the bytes' device that holds the key's link, is made of links whose kind
    orders as PCIe does (``vocab.READ_BACK_KINDS``), none ``unordered``, beside which no link lies
    on a simple path between the two, and which is the one route of the write's traffic between
    them (``_leg``); the writer's device is no ``cpu``; the paths order the writer before the read
    and the read before the key's reader. The read's completion follows the posted writes along
    that one path and does not pass them (PCIe Base Specification, section 2.4.1). Returns the
    ``Statement``; raises nothing (a failed fact is recorded in it)."""
    st = Statement()
    bound = two_accesses(facts, c, st, codes.ORD_003, "a host read between a write and a read", parts=3)
    if bound is None:
        return st
    w, r, aw, _ar = bound
    ew, link, x = facts.edges[w], key_body(c.key).split("|")[2], ev.reader
    pol, d = facts.policy, ew.device
    st.fact(aw.mode is not AccessMode.READ, f"`{ew.name}`'s access in the key writes nothing")
    st.fact(ev.link == link and link in ev.route, f"the route does not cross the obligation's link `{link}`")
    slow = [n for n in ev.route if not pol.has("link", n) or pol.link(n).kind not in READ_BACK_KINDS]
    st.fact(not slow, f"a completion does not keep behind posted writes over `{', '.join(slow)}` (not a PCIe link)")
    if not st.fact(0 <= x < len(facts.edges) and x not in (w, r), f"{facts.name(x)} is no edge other than the two"):
        return st
    ex = facts.edges[x]
    home = pol.space(aw.footprint.space).device
    st.fact(not facts.cancellers.get(x), f"`{ex.name}` is cancelled: it may never be issued")
    on_d = {sp.name for sp in pol.spaces if sp.device == d}
    ok = st.need(ex.device == home != d, f"`{ex.name}` is not driven by `{home}`, which holds the bytes, or `{d}` wrote "
                 "into its own memory")
    ok = st.need(pol.device(home).kind is DeviceKind.CPU,
                 f"`{home}` is no host: its memory may take another device's posted writes out of order") and ok
    ok = st.need(pol.device(d).kind is not DeviceKind.CPU, f"the writer `{d}` is a host: its stores are no DMA") and ok
    ok = st.need(any(a.mode is AccessMode.READ and a.footprint.space in on_d for a in ex.accesses()),
                 f"`{ex.name}` reads nothing on `{d}`") and ok
    ok = _only_path(facts, st, ev.route, d, home, f"traffic between `{d}` and `{home}`") and ok
    ok = _leg(facts, st, ew, ev.route, d, home) and ok
    ok = _keeps_order(facts, st, ev.route) and ok
    return _pushed_between(facts, st, ev, (w, x, r), "host read", {"host_reads_the_writer_over_the_only_path": ok})


def _read_back(facts: Facts, st: Statement, ew: Edge, written: Footprint, x: int, route: tuple[str, ...], ev_link: str,
               link: str) -> bool | None:
    """Record in ``st`` that edge ``x`` reads back what ``ew`` wrote into ``written`` over posted
    ``link``: ``route`` holds the link (``ev_link`` is it), ``x`` is another edge driven by
    ``ew``'s device, which is not the bytes' device, that no edge cancels, and that reads from a
    space on the bytes' device, and the traffic of both between those two devices can take
    only ``route`` (``_leg``), every link of which orders reads after posted writes
    (``vocab.READ_BACK_KINDS``). Returns whether the conclusions about ``x`` hold (the caller
    states them as a constant of the SMT statement, so ``--certify smt`` checks them too), or
    ``None`` when ``x`` is no edge (the rest is recorded as facts)."""
    st.fact(ev_link == link and link in route, f"the route does not cross the obligation's link `{link}`")
    slow = [n for n in route if not facts.policy.has("link", n) or facts.policy.link(n).kind not in READ_BACK_KINDS]
    st.fact(not slow, f"a read does not push posted writes over `{', '.join(slow)}` (not a PCIe link)")
    if not st.fact(0 <= x < len(facts.edges) and x != ew.eid, f"{facts.name(x)} is no other edge"):
        return None
    ex = facts.edges[x]
    home = next(sp.device for sp in facts.policy.spaces if sp.name == written.space)
    st.fact(not facts.cancellers.get(x), f"`{ex.name}` is cancelled: it may never be issued")
    ok = st.need(ex.device == ew.device and home != ew.device,
                 f"`{ex.name}` is not driven by `{ew.device}`, or the bytes are in its own memory")
    on_home = {sp.name for sp in facts.policy.spaces if sp.device == home}
    ok = st.need(any(a.mode is AccessMode.READ and a.footprint.space in on_home for a in ex.accesses()),
                 f"`{ex.name}` reads nothing on `{home}`") and ok
    for e in (ew, ex):
        ok = _leg(facts, st, e, route, ew.device, home) and ok
    return _keeps_order(facts, st, route) and ok
