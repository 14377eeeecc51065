"""Random small policies, built directly as IR, for property tests (no parser involved)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from fxverify.ir import (
    Alloc, AliasSet, Cancel, Checksum, Compress, ConsistencyClass, Device, Edge, EdgeAction, Expectation, FinalOwner, Footprint,
    Handoff, Lease,
    Link, MapDecl, MapOp, MapOpKind, Persist, Policy, Quantize, Region, Release, Revoke, Space, Transform,
    transfer_devices,
)
from fxverify.vocab import ClassKind, DeviceKind, LinkOrder, ReleaseKind

DEVICES = (
    Device("gpu0", DeviceKind.GPU, ("launch", "copy_done", "free")),
    Device("dpu0", DeviceKind.DPU, ("rx", "tx", "dma_done")),
    Device("cxl0", DeviceKind.CXL_MEM, ("near_mem",)),
)
# `ddr0` starts at 0 like `hbm0`: the same numbers in two spaces are different bytes.
SPACES = (Space("hbm0", "gpu0", 0, 4096), Space("hdm0", "cxl0", 0x8000, 4096, persistent=True),
          Space("ddr0", "dpu0", 0, 4096))
REGIONS = (
    Region("a", "a", "hbm0", 0, 256, "gpu0", dtype="bf16"),
    Region("b", "b", "hbm0", 256, 256, "gpu0", alias_set="ab"),
    Region("c", "c", "hdm0", 0x8000, 256, "gpu0", dtype="fp8"),
    # Inside `b` (same alias set) with another owner: ownership is per region, bytes are shared,
    # and a handoff of `b` moves `d` too.
    Region("d", "d", "hbm0", 384, 64, "dpu0", alias_set="ab"),
    # A view that overlaps the end of `b` without being inside it: both govern shared bytes.
    Region("v", "v", "hbm0", 448, 128, "gpu0", alias_set="ab"),
    # The numbers of `a` and `b`, in the DPU's memory.
    Region("m", "m", "ddr0", 0, 512, "dpu0"),
    # A block that starts in its pool: no use before an `alloc` of it.
    Region("p", "p", "hbm0", 1024, 128, "gpu0", pooled=True),
)
MAPS = (
    MapDecl("ctr", "array", "u32", "u64", 4, ConsistencyClass(ClassKind.PER_DEVICE), "sum"),
    MapDecl("st", "hash", "u32", "u32", 4, ConsistencyClass(ClassKind.CAUSAL)),
    MapDecl("ev", "hash", "u32", "u32", 4, ConsistencyClass(ClassKind.EVENTUAL), "max"),
    MapDecl("lo", "array", "u32", "u32", 4, ConsistencyClass(ClassKind.LOCAL, "gpu0"), "last"),
    MapDecl("ln", "hash", "u32", "u32", 4, ConsistencyClass(ClassKind.LINEARIZABLE), "last"),
    # Set before the flow: any write, update or aggregate of it is FX-MAP-005, its guards need no order.
    MapDecl("co", "array", "u32", "u32", 4, ConsistencyClass(ClassKind.CONST)),
)


@st.composite
def footprints(draw, region: Region) -> Footprint:
    """A small footprint in ``region``, sometimes strided, rarely out of bounds."""
    off = draw(st.sampled_from([0, 0, 16, 32, 64, 128]))
    elem = draw(st.sampled_from([8, 16, 32, 64]))
    count = draw(st.integers(1, 4))
    stride = draw(st.sampled_from([elem, elem, 2 * elem, 4 * elem]))
    return Footprint(region.name, region.space, region.base + off, elem, stride, count)


def _device_of(fp: Footprint | None) -> str | None:
    return None if fp is None else next(s.device for s in SPACES if s.name == fp.space)


def simple_paths(links: tuple[Link, ...], a: str, b: str) -> list[list[str]]:
    """Every simple path from device ``a`` to ``b`` as link names (small fabrics only)."""
    out: list[list[str]] = []

    def walk(at: str, path: list[str], seen: set[str]) -> None:
        if at == b:
            out.append(path)
            return
        for ln in links:
            if at in (ln.a, ln.b):
                nxt = ln.b if at == ln.a else ln.a
                if nxt not in seen:
                    walk(nxt, path + [ln.name], seen | {nxt})
    walk(a, [], {a})
    return out


def initialised(draw) -> tuple[tuple[Region, ...], tuple[Space, ...]]:
    """``REGIONS`` and ``SPACES``, each region or space declared ``init`` (loaded before the flow)
    at random: half of the regions, and rarely a whole space (FX-INIT-001)."""
    regions = tuple(replace(r, init=draw(st.booleans())) for r in REGIONS)
    spaces = tuple(replace(s, init=draw(st.integers(0, 5)) == 0) for s in SPACES)
    return regions, spaces


def cancellable(e: Edge) -> bool:
    """True when the language lets an edge cancel ``e`` (``resolve.edges.check_cancels``): a
    ``read``, ``write`` or ``move`` with no clause a cancel could stop halfway."""
    return e.action in (EdgeAction.READ, EdgeAction.WRITE, EdgeAction.MOVE) and not (
        e.handoffs or e.leases or e.revokes or e.releases or e.allocs or e.flushes or e.writebacks or e.invalidates
        or e.notifies or e.expects or e.cancels)


def with_cancels(draw, edges: list[Edge]) -> list[Edge]:
    """``edges`` where, now and then, one edge also cancels a transfer of its own device that the
    language lets it cancel (``cancellable``, not itself, not an edge that cancels), before or
    after it in declaration order: its touch interval then ends at the canceller's finish."""
    if len(edges) < 2 or draw(st.integers(0, 2)) != 0:
        return edges
    i = draw(st.integers(0, len(edges) - 1))
    targets = [x for x in edges if x.eid != i and x.device == edges[i].device and cancellable(x)]
    if not targets:
        return edges
    x = draw(st.sampled_from(targets))
    out = list(edges)
    out[i] = replace(out[i], cancels=out[i].cancels + (Cancel(x.name),))
    return out


@st.composite
def policies(draw, max_edges: int = 5) -> Policy:
    """A random policy over a fixed 3-device fabric with up to ``max_edges`` edges."""
    posted = draw(st.booleans())
    links = (
        Link("gpu0--dpu0", "gpu0", "dpu0", "pcie", LinkOrder.POSTED if posted else LinkOrder.ORDERED),
        Link("gpu0--cxl0", "gpu0", "cxl0", "cxl", draw(st.sampled_from(list(LinkOrder)))),
    )
    if draw(st.booleans()):
        # A second route to the expander: a transfer may take either path unless it pins one.
        links += (Link("dpu0--cxl0", "dpu0", "cxl0", "cxl", draw(st.sampled_from(list(LinkOrder)))),)
    if draw(st.integers(0, 2)) == 0:
        # A parallel link between the GPU and the DPU, declared before or after the first one.
        nv = Link("nv0", "gpu0", "dpu0", "nvlink", draw(st.sampled_from(list(LinkOrder))))
        links = (nv, *links) if draw(st.booleans()) else (*links, nv)
    n = draw(st.integers(1, max_edges))
    edges: list[Edge] = []
    for i in range(n):
        action = draw(st.sampled_from(["write", "read", "move", "reduce", "release", "flush", "alloc"]))
        dev = draw(st.sampled_from(["gpu0", "gpu0", "dpu0", "cxl0"]))
        hook = draw(st.sampled_from([h for d in DEVICES if d.name == dev for h in d.hooks]))
        src = dst = None
        r1 = draw(st.sampled_from(REGIONS))
        r2 = draw(st.sampled_from(REGIONS))
        if action in ("read", "move", "reduce"):
            src = draw(footprints(r1))
        if action in ("write", "move", "reduce"):
            dst = draw(footprints(r2))
        after = tuple(sorted({f"e{j}" for j in draw(st.lists(st.integers(0, max(0, i - 1)), max_size=2)) if j < i}))
        if i + 1 < n and draw(st.integers(0, 25)) == 0:
            after += (f"e{i + 1}",)  # a forward reference: may close an HB cycle
        handoffs = releases = leases = ()
        region = draw(st.sampled_from(REGIONS))
        if draw(st.integers(0, 3)) == 0:
            # Sometimes two on one edge: of one region, or of a region and one inside it.
            handoffs = tuple(Handoff(draw(st.sampled_from(REGIONS)).name if k else region.name,
                                     draw(st.sampled_from(["gpu0", "dpu0"])), draw(st.sampled_from(["dpu0", "cxl0", "gpu0"])))
                             for k in range(draw(st.sampled_from([1, 1, 1, 2]))))
        if action == "release":
            releases = (Release(region.name, ReleaseKind.FREE),) * draw(st.sampled_from([1, 1, 1, 2]))
        if draw(st.integers(0, 4)) == 0:
            leases = (Lease(region.name, "dpu0"),)
        allocs: tuple[Alloc, ...] = ()
        if action == "alloc":  # an alloc edge touches, releases and hands off nothing (resolve)
            allocs, handoffs = (Alloc(region.name, draw(st.sampled_from(["gpu0", "gpu0", "dpu0"]))),), ()
        revokes: tuple[Revoke, ...] = ()
        if draw(st.integers(0, 4)) == 0:
            # Of the leased region, one inside or around it, or another; mostly from the lessee.
            revokes = (Revoke(draw(st.sampled_from([region, region, *REGIONS])).name, draw(st.sampled_from(["dpu0", "dpu0", "cxl0"]))),)
        transforms: tuple[Transform, ...] = ()
        if action == "move" and draw(st.booleans()):
            transforms = tuple(draw(st.lists(st.sampled_from([
                Checksum("crc32c"), Compress("lz4"), Quantize("bf16", "fp8"), Persist(),
            ]), max_size=3)))
        elif action == "read" and draw(st.integers(0, 3)) == 0:
            # Sealed in place: the persisted space is the source's (persistent or not).
            transforms = tuple(draw(st.lists(st.sampled_from([Checksum("crc32c"), Persist()]), min_size=1, max_size=2)))
        map_ops = tuple(MapOp(m, k, 0, 1) for m, k in draw(st.lists(st.tuples(
            st.sampled_from([m.name for m in MAPS]), st.sampled_from(list(MapOpKind))), max_size=2)))
        via = None
        ends = transfer_devices(dev, _device_of(src), _device_of(dst))
        if ends[0] != ends[1] and draw(st.integers(0, 3)) == 0:
            routes = routes_through(links, *ends, dev)  # none when no path passes the driver
            via = tuple(draw(st.sampled_from(routes))) if routes else None
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), dev, hook, src=src, dst=dst, via=via,
                          reduce_op=draw(st.sampled_from(["sum", "sum", "sub"])) if action == "reduce" else None,
                          reduce_atomic=draw(st.integers(0, 3)) != 0,
                          after=after, stream=draw(st.sampled_from([None, None, None, "s0"])),
                          flushes=(draw(st.sampled_from([ln.name for ln in links])),) if action == "flush" else (),
                          require_in_order=draw(st.integers(0, 6)) == 0,
                          alias=draw(st.sampled_from([None, None, None, "x", "y"])),
                          transforms=transforms, handoffs=handoffs, leases=leases, revokes=revokes, releases=releases,
                          allocs=allocs, map_ops=map_ops))
    edges = with_cancels(draw, edges)
    finals = ()
    if draw(st.booleans()):
        finals = (FinalOwner(draw(st.sampled_from(REGIONS)).name, draw(st.sampled_from(["gpu0", "cxl0"]))),)
    regions, spaces = initialised(draw)
    return Policy("random", "random.fx", DEVICES, links, spaces, regions,
                  (AliasSet("ab", ("b", "d", "v")), AliasSet("x", ()), AliasSet("y", ())), MAPS, tuple(edges), finals)


@st.composite
def lease_revoke_policies(draw) -> Policy:
    """A random policy of 3 to 5 edges about one read lease: grants of it (or of a region around
    it) to a lessee that does not own it, revokes of it (or of a region around it, or beside it;
    from the lessee or another device; by the owner or not), reads by the lessee, sometimes a
    handoff, with random ``after`` clauses between them. Region ``d`` (the DPU's) lies inside
    ``b`` (the GPU's): a grant of ``b`` by the GPU lends ``d`` only once the GPU owns it, after a
    handoff of ``d`` to the GPU (a lease lends only what its grantor owns)."""
    base = draw(policies(max_edges=1))
    region = draw(st.sampled_from([r for r in REGIONS if r.name in ("a", "b", "d")]))
    around = {"a": ["a"], "b": ["b"], "d": ["d", "b"]}[region.name]
    owner = region.owner
    lessee, third = ("dpu0", "cxl0") if owner != "dpu0" else ("cxl0", "gpu0")
    roles = ["grant", "revoke", "read"] + draw(st.lists(st.sampled_from(["grant", "revoke", "read", "handoff"]), max_size=2))
    roles = draw(st.permutations(roles))
    edges: list[Edge] = []
    for i, role in enumerate(roles):
        after = tuple(sorted({f"e{j}" for j in draw(st.lists(st.integers(0, max(0, i - 1)), max_size=2)) if j < i}))
        fp = draw(footprints(region))
        kw: dict = {}
        dev, action = owner, "read"
        if role == "grant":
            leased = draw(st.sampled_from(around))
            # By the leased region's owner, or by the read region's (who may not own the lease's).
            dev = draw(st.sampled_from([next(r.owner for r in REGIONS if r.name == leased), owner]))
            kw["leases"] = (Lease(leased, lessee),)
        elif role == "revoke":
            dev = draw(st.sampled_from([owner, owner, owner, "dpu0" if owner != "dpu0" else "gpu0"]))
            kw["revokes"] = (Revoke(draw(st.sampled_from([*around, *around, "a", "b"])), draw(st.sampled_from([lessee, lessee, third]))),)
        elif role == "read":
            dev = lessee
            fp = draw(st.sampled_from([fp, region.whole()]))  # the whole region: no byte beside it
        else:
            kw["handoffs"] = (Handoff(region.name, owner, third),)
        if dev != owner and role != "read":
            # An edge of a device that may not own the region touches other bytes.
            action, fp = "write", Footprint("m", "ddr0", 0, 16, 16, 1) if dev == "dpu0" else draw(footprints(REGIONS[0]))
        hook = next(d.hooks[0] for d in DEVICES if d.name == dev)
        src, dst = (fp, None) if action == "read" else (None, fp)
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), dev, hook, src=src, dst=dst, after=after, **kw))
    return Policy("lease-revoke", "lease-revoke.fx", DEVICES, base.links, base.spaces, base.regions, base.alias_sets, MAPS,
                  tuple(edges), ())


@st.composite
def lifetime_policies(draw) -> Policy:
    """A random policy of 3 or 4 edges about the lifetime of one block (``a``, which starts
    allocated, or the pooled ``p``): allocations of it (to the GPU or the DPU), releases, writes
    and reads by its owner or the DPU, a lease to the DPU and sometimes a handoff, in random
    orders with random ``after`` clauses between them."""
    base = draw(policies(max_edges=1))
    region = draw(st.sampled_from([r for r in REGIONS if r.name in ("a", "p")]))
    roles = ["alloc", "release", "use"] + draw(st.lists(st.sampled_from(["alloc", "release", "use", "use", "handoff"]), max_size=1))
    roles = draw(st.permutations(roles))
    edges: list[Edge] = []
    for i, role in enumerate(roles):
        after = tuple(sorted({f"e{j}" for j in draw(st.lists(st.integers(0, max(0, i - 1)), max_size=2)) if j < i}))
        kw: dict = {}
        dev, action, src, dst = "gpu0", role, None, None
        if role == "alloc":
            kw["allocs"] = (Alloc(region.name, draw(st.sampled_from(["gpu0", "gpu0", "dpu0"]))),)
        elif role == "release":
            action = "release"
            kw["releases"] = (Release(region.name, ReleaseKind.RETURN_POOL),)
        elif role == "use":
            dev = draw(st.sampled_from(["gpu0", "gpu0", "dpu0"]))
            fp = draw(footprints(region))
            action = draw(st.sampled_from(["write", "read"]))
            src, dst = (fp, None) if action == "read" else (None, fp)
            if dev == "gpu0" and draw(st.booleans()):
                kw["leases"] = (Lease(region.name, "dpu0"),)
        else:
            action, dst = "write", draw(footprints(region))
            kw["handoffs"] = (Handoff(region.name, "gpu0", "dpu0"),)
        hook = next(d.hooks[0] for d in DEVICES if d.name == dev)
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), dev, hook, src=src, dst=dst, after=after, **kw))
    # The block sometimes holds data loaded before the flow: only until an `alloc` of it (FX-INIT-001).
    regions = tuple(replace(r, init=r.name == region.name and draw(st.booleans())) for r in REGIONS)
    return Policy("lifetime", "lifetime.fx", DEVICES, base.links, SPACES, regions, base.alias_sets, MAPS,
                  tuple(edges), ())


@st.composite
def pool_chain_policies(draw, max_requests: int = 5, max_uses: int = 3) -> Policy:
    """A block pool serving 2 to ``max_requests`` requests one after the other: request ``r``
    allocates the pooled ``p`` (``take<r>``, to the GPU or now and then the DPU, so the owner a
    use finds depends on which allocation it follows), writes and reads it (1 to ``max_uses``
    uses) and frees it (``free<r>``), each step after the one before, and ``take<r>`` after
    ``free<r-1>``: the lifetime events form one HB chain (the last request may keep the block).
    Now and then an ordering is left out (a use the free does not wait for, an allocation that
    does not wait for the previous free) or a use waits on another request's step, so a use
    falls between, across or outside the allocations."""
    base = draw(policies(max_edges=1))
    edges: list[Edge] = []

    def add(name: str, action: str, after: tuple[str, ...], **kw) -> None:
        edges.append(Edge(len(edges), name, name, EdgeAction(action), "gpu0", "launch", after=after, **kw))

    last_free: str | None = None
    names: list[str] = []
    n = draw(st.integers(2, max_requests))
    for r in range(n):
        take_after = (last_free,) if last_free is not None and draw(st.integers(0, 5)) else ()
        add(f"take{r}", "alloc", take_after, allocs=(Alloc("p", draw(st.sampled_from(["gpu0", "gpu0", "dpu0"]))),))
        prev = f"take{r}"
        uses = []
        for j in range(draw(st.integers(1, max_uses))):
            extra = (draw(st.sampled_from(names)),) if names and not draw(st.integers(0, 6)) else ()
            action = draw(st.sampled_from(["write", "read"]))
            fp = draw(footprints(REGIONS[[x.name for x in REGIONS].index("p")]))
            src, dst = (fp, None) if action == "read" else (None, fp)
            add(f"use{r}_{j}", action, tuple(sorted({prev, *extra})), src=src, dst=dst)
            uses.append(f"use{r}_{j}")
            prev = f"use{r}_{j}"
        names += [f"take{r}", *uses]
        if r == n - 1 and draw(st.booleans()):
            break  # the last request keeps the block: the chain ends with its allocation
        waits = (prev,) if draw(st.integers(0, 5)) else (f"take{r}",)
        add(f"free{r}", "release", waits, releases=(Release("p", ReleaseKind.RETURN_POOL),))
        last_free = f"free{r}"
        names.append(f"free{r}")
    return Policy("pool-chain", "pool-chain.fx", DEVICES, base.links, SPACES, REGIONS, base.alias_sets, MAPS,
                  tuple(edges), ())


@st.composite
def reduction_policies(draw) -> Policy:
    """Two to four reductions into (and reads of) overlapping, sometimes strided footprints of
    one accumulator `a`, on two streams of `gpu0`, each with a random operator (``sum``, ``max``,
    the non-commuting ``sub``) and atomic or ``nonatomic``, with random ``after`` clauses:
    concurrent atomic reductions with one commuting operator are fine, a non-atomic one races
    with any concurrent reduction (FX-ORD-002), different operators do not commute (FX-XF-004)."""
    base = draw(policies(max_edges=1))
    acc, src = base.region("a"), base.region("b")
    n = draw(st.integers(2, 4))
    edges: list[Edge] = []
    for i in range(n):
        after = (f"e{draw(st.integers(0, i - 1))}",) if i and draw(st.integers(0, 2)) == 0 else ()
        if i and draw(st.integers(0, 4)) == 0:
            edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction.READ, "gpu0", "launch", src=draw(footprints(acc)),
                              after=after, stream=draw(st.sampled_from(["s0", "s1"]))))
            continue
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction.REDUCE, "gpu0", "launch", src=draw(footprints(src)),
                          dst=draw(footprints(acc)), reduce_op=draw(st.sampled_from(["sum", "sum", "sum", "max", "sub"])),
                          reduce_atomic=draw(st.integers(0, 2)) != 0, after=after, stream=draw(st.sampled_from(["s0", "s1"]))))
    return replace(base, links=(), edges=tuple(edges), final_owners=(), _index={})


@st.composite
def def_use_policies(draw) -> Policy:
    """A random policy of 2 to 5 edges that write, move, reduce into and read overlapping, often
    strided footprints of regions `a` and `b` (sometimes declared `init`), moves sometimes shorter
    than their destinations or through a quantize or compress step, with random ``after``
    clauses: the bytes each read sees defined (FX-INIT-001) depend on the order and the cover.
    Sometimes (``lifetimes``) releases and ``alloc``s of `a` or `b` come between them: a write of
    an earlier allocation, or the ``init`` contents before an ``alloc``, define nothing for a read
    in a later one (same allocation)."""
    base = draw(policies(max_edges=1))
    pair = [r for r in base.regions if r.name in ("a", "b")]
    n = draw(st.integers(2, 5))
    kinds = ["write", "write", "move", "reduce", "read", "read"]
    if draw(st.booleans()):
        kinds += ["alloc", "release"]
    edges: list[Edge] = []
    for i in range(n):
        action = draw(st.sampled_from(kinds))
        after = tuple(sorted({f"e{j}" for j in draw(st.lists(st.integers(0, max(0, i - 1)), max_size=2)) if j < i}))
        src = draw(footprints(draw(st.sampled_from(pair)))) if action in ("read", "move", "reduce") else None
        dst = draw(footprints(draw(st.sampled_from(pair)))) if action in ("write", "move", "reduce") else None
        transforms: tuple[Transform, ...] = ()
        if action == "move" and draw(st.integers(0, 3)) == 0:
            transforms = (draw(st.sampled_from([Quantize("bf16", "fp8"), Compress("lz4"), Checksum("crc32c")])),)
        lifetime: dict = {}
        if action == "alloc":
            lifetime["allocs"] = (Alloc(draw(st.sampled_from(pair)).name, "gpu0"),)
        elif action == "release":
            lifetime["releases"] = (Release(draw(st.sampled_from(pair)).name, ReleaseKind.RETURN_POOL),)
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), "gpu0", "launch", src=src, dst=dst,
                          reduce_op="sum" if action == "reduce" else None, after=after, transforms=transforms,
                          **lifetime))
    return replace(base, edges=tuple(edges), final_owners=(), _index={})


@st.composite
def intent_policies(draw) -> Policy:
    """Up to 5 edges around one accumulator and one checksummed block: producers (plain moves and
    writes, reductions with `sum` or `max`), consumers that read it and may declare
    ``expects sum of`` some of the edges, checksum edges (in place or on a move, some persisting),
    and random HB. The pmem space sometimes declares ``checksum crc32c``."""
    declared = draw(st.booleans())
    spaces = (SPACES[0], Space("hdm0", "cxl0", 0x8000, 4096, persistent=True, checksum="crc32c" if declared else None),
              SPACES[2])
    acc = draw(st.sampled_from([r for r in REGIONS if r.name in ("a", "c")]))
    n = draw(st.integers(2, 5))
    edges: list[Edge] = []
    for i in range(n):
        role = draw(st.sampled_from(["move", "write", "reduce", "read", "read", "checksum"]))
        after = tuple(sorted({f"e{j}" for j in draw(st.lists(st.integers(0, max(0, i - 1)), max_size=2)) if j < i}))
        fp = draw(footprints(acc))
        other = draw(footprints(REGIONS[1]))
        kw: dict = {}
        if role in ("move", "reduce"):
            action, kw["src"], kw["dst"] = EdgeAction(role), other, fp
            if role == "reduce":
                kw["reduce_op"] = draw(st.sampled_from(["sum", "sum", "max"]))
                kw["reduce_atomic"] = draw(st.integers(0, 2)) != 0
        elif role == "write":
            action, kw["dst"] = EdgeAction.WRITE, fp
        elif role == "read":
            action, kw["src"] = EdgeAction.READ, fp
            if draw(st.booleans()):
                names = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True))
                kw["expects"] = Expectation("sum", tuple(f"e{j}" for j in sorted(names)))
        else:  # a checksum over the block: in place (a read) or on a move into it
            chain = (Checksum(draw(st.sampled_from(["crc32c", "crc32c", "xxh64"]))),) + ((Persist(),) if draw(st.booleans()) else ())
            if draw(st.booleans()):
                action, kw["src"] = EdgeAction.READ, fp
            else:
                action, kw["src"], kw["dst"] = EdgeAction.MOVE, other, fp
                chain = draw(st.sampled_from([(), (Compress("lz4"),)])) + chain
            kw["transforms"] = chain
        edges.append(Edge(i, f"e{i}", f"e{i}", action, "gpu0", "launch", after=after,
                          stream=draw(st.sampled_from([None, None, "s0"])), **kw))
    return Policy("random", "random.fx", DEVICES, (Link("gpu0--cxl0", "gpu0", "cxl0", "cxl", LinkOrder.ORDERED),
                                                   Link("nv0", "gpu0", "dpu0", "nvlink", LinkOrder.ORDERED)),
                  spaces, REGIONS, (AliasSet("ab", ("b", "d", "v")),), MAPS, tuple(edges), ())
CACHE_DEVICES = DEVICES + (Device("cpu0", DeviceKind.CPU, ("run",)),)


@st.composite
def coherence_policies(draw) -> Policy:
    """A random policy of 3 to 5 edges over a ``noncoherent`` space shared by two hosts (``gpu0``,
    ``cpu0``), a DMA device (``dpu0``, no host cache) and the memory's own near-memory engine
    (``cxl0``): writes and reads of one region by any of them, write-backs and invalidates (as
    clauses of those edges or edges of their own, by either host, over random footprints, strided
    ones included) and ``notifies`` clauses naming random edges, with random ``after`` clauses
    between them. The DMA device reaches the memory over its own link, behind ``cpu0``'s root
    port (its accesses go through that host's cache), or both (either may serve it). Sometimes a
    second space (coherent or not) sits at the same numeric addresses, with a region ``t`` at the
    numbers of ``s``: its bytes are other memory, so a write-back or invalidate of one never
    serves the other (the IR allows it; the language rejects two such spaces on one device)."""
    shm = Space("shm0", "cxl0", 0x10000, 4096, noncoherent=True)
    region = Region("s", "s", "shm0", 0x10000, 256, "gpu0")
    spaces, regions = (shm,), (region,)
    if draw(st.integers(0, 2)) == 0:
        spaces += (Space("shm1", "cxl0", 0x10000, 4096, noncoherent=draw(st.booleans())),)
        regions += (Region("t", "t", "shm1", 0x10000, 256, "gpu0"),)
    attach = draw(st.sampled_from(["direct", "direct", "behind-cpu", "both"]))
    links = tuple(Link(f"{d}--cxl0", d, "cxl0", "cxl", LinkOrder.ORDERED) for d in ("gpu0", "cpu0"))
    if attach != "behind-cpu":
        links += (Link("dpu0--cxl0", "dpu0", "cxl0", "cxl", LinkOrder.ORDERED),)
    if attach != "direct":
        links += (Link("dpu0--cpu0", "dpu0", "cpu0", "pcie", LinkOrder.ORDERED),)
    roles = ["write", "read", draw(st.sampled_from(["writeback", "invalidate", "read", "write"]))]
    roles += draw(st.lists(st.sampled_from(["write", "read", "writeback", "invalidate"]), max_size=2))
    roles = draw(st.permutations(roles))
    edges: list[Edge] = []
    for i, role in enumerate(roles):
        after = tuple(sorted({f"e{j}" for j in draw(st.lists(st.integers(0, max(0, i - 1)), max_size=2)) if j < i}))
        kw: dict = {}
        r = draw(st.sampled_from([region, region, *regions]))
        fp = draw(footprints(r))
        if role == "write":
            dev = draw(st.sampled_from(["gpu0", "gpu0", "cpu0", "dpu0", "cxl0"]))
            action, kw["dst"] = "write", fp
        elif role == "read":
            dev = draw(st.sampled_from(["cpu0", "cpu0", "gpu0", "dpu0", "cxl0"]))
            action, kw["src"] = "read", fp
        else:
            dev, action = draw(st.sampled_from(["gpu0", "cpu0"])), role
        host = dev in ("gpu0", "cpu0")

        def line(q: Region) -> Footprint:
            return draw(st.sampled_from([fp, Footprint(q.name, q.space, q.base, q.size, q.size, 1), draw(footprints(q))]))
        if role == "writeback" or (role == "write" and host and draw(st.booleans())):
            kw["writebacks"] = (line(draw(st.sampled_from([r, *regions]))),)
        if role == "invalidate" or (role == "read" and host and draw(st.booleans())):
            kw["invalidates"] = (line(draw(st.sampled_from([r, *regions]))),)
        if i and draw(st.integers(0, 3)) == 0:
            kw["notifies"] = (f"e{draw(st.integers(0, i - 1))}",)
        hook = next(d.hooks[0] for d in CACHE_DEVICES if d.name == dev)
        leases = tuple(Lease(q.name, to) for q in regions for to in ("cpu0", "dpu0", "cxl0")) if dev == "gpu0" and i == 0 else ()
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), dev, hook, after=after, leases=leases, **kw))
    return Policy("coherence", "coherence.fx", CACHE_DEVICES, links, spaces, regions, (), (), tuple(edges), ())


@st.composite
def cancel_policies(draw) -> Policy:
    """A random policy of 3 to 5 edges around a transfer engine's abort path on one block (``a``,
    which starts allocated, or the pooled ``p``): transfers into it (``pull``: a move from ``b``,
    sometimes a read of the block), cancels of them (an edge of their own, or a clause on a
    release or a write), releases and ``alloc``s of the block, and writes and reads of it, all on
    the GPU, with random ``after`` clauses between them. The verdicts of FX-ORD-002, FX-OWN-004,
    FX-OWN-006 and FX-INIT-001 turn on whether each use is HB-after a cancel's completion."""
    base = draw(policies(max_edges=1))
    region = draw(st.sampled_from([r for r in REGIONS if r.name in ("a", "p")]))
    roles = ["pull", "cancel", draw(st.sampled_from(["release", "write", "read", "alloc"]))]
    roles += draw(st.lists(st.sampled_from(["cancel", "release", "alloc", "write", "read", "pull"]), max_size=2))
    roles = draw(st.permutations(roles))
    pulls = [f"e{i}" for i, r in enumerate(roles) if r == "pull"]
    edges: list[Edge] = []
    for i, role in enumerate(roles):
        after = tuple(sorted({f"e{j}" for j in draw(st.lists(st.integers(0, max(0, i - 1)), max_size=2)) if j < i}))
        kw: dict = {}
        action = role
        if role == "pull":
            if draw(st.integers(0, 3)) == 0:
                action, kw["src"] = "read", draw(footprints(region))
            else:
                action, kw["src"], kw["dst"] = "move", draw(footprints(REGIONS[1])), draw(footprints(region))
        elif role == "cancel":
            kw["cancels"] = (Cancel(draw(st.sampled_from(pulls))),)
            action = draw(st.sampled_from(["cancel", "cancel", "release", "write"]))
            if action == "release":
                kw["releases"] = (Release(region.name, ReleaseKind.RETURN_POOL),)
            elif action == "write":
                kw["dst"] = draw(footprints(region))
        elif role == "release":
            kw["releases"] = (Release(region.name, ReleaseKind.RETURN_POOL),)
        elif role == "alloc":
            kw["allocs"] = (Alloc(region.name, "gpu0"),)
        elif role == "write":
            kw["dst"] = draw(footprints(region))
        else:
            kw["src"] = draw(footprints(region))
        hook = draw(st.sampled_from(DEVICES[0].hooks))
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), "gpu0", hook, after=after, **kw))
    # `b` is sometimes loaded before the flow; the block itself only until an `alloc` of it.
    regions = tuple(replace(r, init=(r.name == "b" and draw(st.booleans())) or (r.name == region.name and draw(st.booleans())))
                    for r in REGIONS)
    return Policy("cancel", "cancel.fx", DEVICES, base.links, SPACES, regions, base.alias_sets, MAPS, tuple(edges), ())

@st.composite
def reuse_policies(draw, min_edges: int = 30, max_edges: int = 60) -> Policy:
    """A random layered flow on one GPU whose edges write, read, move and reduce into a few reused
    buffers (`a`, and the overlapping views `b` and `v`), on streams or ordered by `after` with
    mostly recent edges, with now and then an ordering left out: a graph large enough for the
    access-history sweep (``obligations.history``) to hold several writers and readers per byte
    range, with races among ordered pairs."""
    n = draw(st.integers(min_edges, max_edges))
    buffers = [r for r in REGIONS if r.name in ("a", "b", "v")]
    edges: list[Edge] = []
    for i in range(n):
        action = draw(st.sampled_from(["write", "read", "move", "reduce", "read", "write"]))
        src = draw(footprints(draw(st.sampled_from(buffers)))) if action in ("read", "move", "reduce") else None
        dst = draw(footprints(draw(st.sampled_from(buffers)))) if action in ("write", "move", "reduce") else None
        after: tuple[str, ...] = ()
        if i and draw(st.integers(0, 7)):
            back = draw(st.lists(st.integers(1, min(i, 4)), min_size=1, max_size=2))
            after = tuple(sorted({f"e{i - k}" for k in back}))
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), "gpu0", draw(st.sampled_from(["launch", "copy_done"])),
                          src=src, dst=dst, reduce_op=draw(st.sampled_from(["sum", "sum", "max"])) if action == "reduce" else None,
                          after=after, stream=draw(st.sampled_from([None, None, "s0", "s1"]))))
    regions = tuple(replace(r, init=True) for r in REGIONS)
    return Policy("reuse", "reuse.fx", DEVICES, (), SPACES, regions, (AliasSet("ab", ("b", "d", "v")),), MAPS, tuple(edges))


def routes_through(links: tuple[Link, ...], a: str, b: str, driver: str) -> list[list[str]]:
    """The simple paths from device ``a`` to ``b`` (``simple_paths``) that a transfer ``driver``
    drives may pin with ``via``: every one when it is at an end, those through it when it is not
    (FX-TYP-006: a third-party transfer's route runs through its driver's engine)."""
    paths = simple_paths(links, a, b)
    if driver in (a, b):
        return paths
    ends = {ln.name: (ln.a, ln.b) for ln in links}
    return [p for p in paths if any(driver in ends[n] for n in p)]


@st.composite
def persist_policies(draw, third_party: bool = False) -> Policy:
    """A random policy of 2 to 5 edges around checkpoints into the persistent ``c`` (in ``hdm0``
    on ``cxl0``): one or two moves from ``a`` that ``persist``, driven by the GPU (a push) or now
    and then by the expander (a pull, whose writes cross no link), (sometimes flushing a link
    themselves, sometimes pinned with ``via``), flush edges of random links, reads of ``c`` by
    the DPU, and read-backs of ``c`` into ``b`` by the GPU (sometimes pinned), with random
    ``after`` clauses, now and then a cancel (``with_cancels``; ``hdm0`` is sometimes not persistent). The GPU reaches the expander directly, over a link that
    is ``posted`` or not, of kind ``pcie`` (where a read-back pushes posted writes) or ``cxl``
    (where it does not: ``vocab.READ_BACK_KINDS``), and sometimes also through the DPU (a second
    route, posted or not).

    ``third_party``: the DPU is always on the fabric, half the time with no direct link from the
    GPU to the expander, its links are ``pcie`` or ``cxl``, posted or
    not, now and then with a second (posted PCIe) function to the expander, so that two pinned
    routes through it may differ between it and the expander; and it drives most persists and
    read-backs itself, as copies between
    the GPU and the expander (third-party transfers, pinned through it more often than not) or,
    now and then, as a copy inside the expander's memory (never pinned: FX-TYP-006); and its
    reads of ``c`` are sometimes pinned."""
    links = (Link("gpu0--cxl0", "gpu0", "cxl0", draw(st.sampled_from(["pcie", "cxl"])),
                  draw(st.sampled_from([LinkOrder.POSTED, LinkOrder.ORDERED]))),)
    third = third_party
    if third and draw(st.booleans()):  # the DPU alone joins the GPU and the expander
        links = ()
    if third or draw(st.booleans()):
        links += (Link("gpu0--dpu0", "gpu0", "dpu0", draw(st.sampled_from(["pcie", "cxl"])) if third else "pcie",
                       draw(st.sampled_from([LinkOrder.POSTED, LinkOrder.ORDERED]))),
                  Link("dpu0--cxl0", "dpu0", "cxl0", draw(st.sampled_from(["cxl", "pcie"])) if third else "cxl",
                       draw(st.sampled_from([LinkOrder.ORDERED, LinkOrder.POSTED])) if third else LinkOrder.ORDERED))
    if third and draw(st.booleans()):  # a second function of the DPU to the expander: two legs
        links += (Link("dpu0-pf1-cxl0", "dpu0", "cxl0", "pcie", LinkOrder.POSTED),)
    names = [ln.name for ln in links]
    a, c = REGIONS[0], REGIONS[2]
    roles = ["persist"] + draw(st.lists(st.sampled_from(["persist", "flush", "flush", "read", "readback", "readback"]), min_size=1,
                                        max_size=4))
    roles = draw(st.permutations(roles))
    edges: list[Edge] = []
    for i, role in enumerate(roles):
        after = tuple(sorted({f"e{j}" for j in draw(st.lists(st.integers(0, max(0, i - 1)), max_size=2)) if j < i}))
        kw: dict = {}
        if role == "persist":  # now and then the expander's own engine pulls the checkpoint in
            drivers = [("gpu0", "copy_done"), ("dpu0", "dma_done"), ("dpu0", "dma_done")] if third else [
                ("gpu0", "copy_done")] * 3 + [("cxl0", "near_mem")]
            dev, hook, action = draw(st.sampled_from(drivers)) + ("move",)
            # now and then the DPU's engine compacts the checkpoint inside the expander's memory
            inside = third and dev == "dpu0" and draw(st.integers(0, 3)) == 0
            kw.update(src=draw(footprints(c if inside else a)), dst=draw(footprints(c)), transforms=(Persist(),))
            if draw(st.integers(0, 3)) == 0:
                kw["flushes"] = (draw(st.sampled_from(names)),)
            if not inside and draw(st.integers(0, 3)) < (1 if dev != "dpu0" else 3):
                kw["via"] = tuple(draw(st.sampled_from(routes_through(links, "gpu0", "cxl0", dev))))
        elif role == "readback":
            # The GPU, or the DPU's engine between the expander and the GPU (a third-party copy),
            # reads the checkpoint back: a flush when over the write's one route from its driver.
            dev = draw(st.sampled_from(["gpu0", "dpu0", "dpu0"] if third else ["gpu0"]))
            hook, action = ("copy_done" if dev == "gpu0" else "dma_done"), "move"
            kw.update(src=draw(footprints(c)), dst=draw(footprints(REGIONS[1])))
            if draw(st.booleans()):
                kw["via"] = tuple(draw(st.sampled_from(routes_through(links, "cxl0", "gpu0", dev))))
        elif role == "flush":
            dev, hook, action = draw(st.sampled_from([("gpu0", "launch"), ("dpu0", "tx")])) + ("flush",)
            kw["flushes"] = (draw(st.sampled_from(names)),)
        else:
            dev, hook, action = "dpu0", "rx", "read"
            kw["src"] = draw(footprints(c))
            if third and draw(st.booleans()):
                kw["via"] = tuple(draw(st.sampled_from(simple_paths(links, "cxl0", "dpu0"))))
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), dev, hook, after=after,
                          stream=draw(st.sampled_from([None, None, "s0"])), **kw))
    # A read-back that some edge cancels may never be issued: it pushes nothing.
    edges = with_cancels(draw, edges)
    regions, spaces = initialised(draw)
    # Now and then the expander's memory is not persistent: the persists are FX-XF-003, and no
    # flush can make them durable (no FX-ORD-003 persisted-write obligation).
    spaces = tuple(replace(s, persistent=draw(st.integers(0, 4)) != 0) if s.persistent else s for s in spaces)
    return Policy("persist", "persist.fx", DEVICES, links, spaces, regions, (), (), tuple(edges), ())


COMPLETION_DEVICES = (
    Device("cpu0", DeviceKind.CPU, ("poll",)),
    Device("nic0", DeviceKind.NIC, ("rx", "tx")),
    Device("gpu0", DeviceKind.GPU, ("launch",)),
)


@st.composite
def completion_policies(draw) -> Policy:
    """A random policy of 3 to 5 edges around a NIC landing a block and writing a completion entry
    (the posted rule's producer/consumer case, specs/obligations.md section 1): writes of the
    block ``kv`` by the NIC (now and then by the GPU), completion entries written into ``cq``
    that ``notifies`` a random earlier edge (driven by the NIC, now and then by the host), reads
    of the block by the host, the GPU or the NIC, polls of ``cq`` by the host, and flush edges,
    with random ``after`` clauses and now and then a cancel (``with_cancels``). The block and the
    queue lie in host memory (``dram0`` on ``cpu0``) or in GPU memory (``hbm0``), each drawn
    apart. The NIC reaches the host over ``nic0--cpu0`` (posted, now and then ordered) and the GPU
    over ``nic0--gpu0`` (posted); sometimes ``gpu0--cpu0`` joins them too, a second path from the
    NIC to the host."""
    links = (Link("nic0--cpu0", "nic0", "cpu0", "pcie", draw(st.sampled_from([LinkOrder.POSTED] * 3 + [LinkOrder.ORDERED]))),
             Link("nic0--gpu0", "nic0", "gpu0", "pcie", LinkOrder.POSTED))
    if draw(st.integers(0, 3)) == 0:
        links += (Link("gpu0--cpu0", "gpu0", "cpu0", "pcie", LinkOrder.ORDERED),)
    spaces = (Space("dram0", "cpu0", 0, 4096), Space("hbm0", "gpu0", 0, 4096))
    homes = [draw(st.sampled_from(["dram0", "dram0", "hbm0"])) for _ in range(2)]
    regions = (Region("kv", "kv", homes[0], 0, 256, "nic0", init=True),
               Region("cq", "cq", homes[1], 1024, 64, "nic0", init=True))
    kv, cq = regions
    roles = ["land", "cqe", "use"] + draw(st.lists(st.sampled_from(["land", "cqe", "use", "flush", "poll"]), max_size=2))
    roles = ["land"] + draw(st.permutations(roles[1:]))
    edges: list[Edge] = []
    for i, role in enumerate(roles):
        after = tuple(sorted({f"e{j}" for j in draw(st.lists(st.integers(0, max(0, i - 1)), max_size=2)) if j < i}))
        kw: dict = {}
        if role == "land":
            dev, action, kw["dst"] = draw(st.sampled_from(["nic0", "nic0", "nic0", "gpu0"])), "write", draw(footprints(kv))
        elif role == "cqe":
            dev, action, kw["dst"] = draw(st.sampled_from(["nic0", "nic0", "nic0", "cpu0"])), "write", draw(footprints(cq))
            lands = [f"e{j}" for j in range(i) if roles[j] == "land"]  # mostly an entry for a landing
            kw["notifies"] = (draw(st.sampled_from(lands * 3 + [f"e{j}" for j in range(i)])),)
        elif role == "use":
            dev, action, kw["src"] = draw(st.sampled_from(["cpu0", "cpu0", "gpu0", "nic0"])), "read", draw(footprints(kv))
        elif role == "poll":
            dev, action, kw["src"] = "cpu0", "read", draw(footprints(cq))
        else:
            dev, action = draw(st.sampled_from(["cpu0", "nic0"])), "flush"
            kw["flushes"] = (draw(st.sampled_from([ln.name for ln in links if dev in (ln.a, ln.b)])),)
        hook = draw(st.sampled_from([h for d in COMPLETION_DEVICES if d.name == dev for h in d.hooks]))
        leases = tuple(Lease(q.name, to) for q in regions for to in ("cpu0", "gpu0")) if i == 0 else ()
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), dev, hook, after=after, leases=leases, **kw))
    edges = with_cancels(draw, edges)
    return Policy("completion", "completion.fx", COMPLETION_DEVICES, links, spaces, regions, (), (), tuple(edges), ())


HOST_READ_DEVICES = (
    Device("cpu0", DeviceKind.CPU, ("irq",)),
    Device("cpu1", DeviceKind.CPU, ("irq",)),
    Device("nic0", DeviceKind.NIC, ("rx",)),
    Device("gpu0", DeviceKind.GPU, ("launch",)),
    Device("sw0", DeviceKind.PCIE_SWITCH, ()),
)


def _mostly_chained(draw, i: int) -> tuple[str, ...]:
    """The ``after`` clause of edge ``e{i}``: the edge before it three times in four, and now and
    then one more earlier edge, sorted."""
    chained = {i - 1} if i and draw(st.integers(0, 3)) else set()
    return tuple(sorted({f"e{j}" for j in chained | set(draw(st.lists(st.integers(0, max(0, i - 1)), max_size=1))) if j < i}))


@st.composite
def host_read_policies(draw) -> Policy:
    """A random policy of 3 to 6 edges around a NIC landing a frame in host memory and an interrupt
    handler that reads the NIC's status register before it reads the frame (the posted rule's host
    reads, specs/obligations.md section 1: the read's completion follows the posted writes along
    their one path): landings of ``frame`` by the NIC (now and then pinned to a route; now and then
    copies from GPU memory that pin none, a third-party transfer with no one route), reads of
    the register ``icr`` on the NIC (by ``cpu0``, now and then by ``cpu1`` or the GPU), reads of
    the frame (by ``cpu0``, now and then by the GPU) and flush edges, with ``after`` clauses that
    mostly chain each edge to the one before, and now and then a cancel (``with_cancels``). The
    frame lies in host memory (``dram0`` on ``cpu0``), now and then in GPU memory (whose reads of
    the register are then mostly the GPU's: no host read, the GPU is no host). The NIC reaches
    ``cpu0`` over ``pf0`` (posted, now and then ordered, now and then a `cxl` link), now and then
    through a switch ``sw0`` whose upstream link ``up0`` is ordered or ``unordered`` (it keeps no
    order: no host read pushes across it); without the switch, sometimes a second function
    ``pf1`` under ``cpu1`` and the inter-socket link give a second path; the GPU hangs under
    ``cpu0``."""
    kind, order = draw(st.sampled_from(["pcie"] * 3 + ["cxl"])), draw(st.sampled_from([LinkOrder.POSTED] * 3 + [LinkOrder.ORDERED]))
    switch = draw(st.integers(0, 2)) == 0
    if switch:  # behind a switch whose upstream link keeps order or not
        links = (Link("pf0", "nic0", "sw0", kind, order),
                 Link("up0", "sw0", "cpu0", "pcie", draw(st.sampled_from([LinkOrder.ORDERED] + [LinkOrder.UNORDERED] * 2))))
    else:
        links = (Link("pf0", "nic0", "cpu0", kind, order),)
    links += (Link("gpu0--cpu0", "gpu0", "cpu0", "pcie", LinkOrder.ORDERED),)
    if not switch and draw(st.integers(0, 2)) == 0:
        links += (Link("pf1", "nic0", "cpu1", "pcie", LinkOrder.POSTED), Link("upi0", "cpu0", "cpu1", "smp", LinkOrder.ORDERED))
    spaces = (Space("dram0", "cpu0", 0, 4096), Space("nicbar", "nic0", 0, 4096), Space("hbm0", "gpu0", 0, 4096))
    home = draw(st.sampled_from(["dram0"] * 4 + ["hbm0"]))
    regions = (Region("src", "src", "nicbar", 1024, 256, "nic0", init=True), Region("icr", "icr", "nicbar", 0, 256, "nic0", init=True),
               Region("frame", "frame", home, 0, 256, "nic0"), Region("gsrc", "gsrc", "hbm0", 1024, 256, "nic0", init=True))
    src, icr, frame, gsrc = regions
    routes = simple_paths(links, "nic0", spaces[0].device if home == "dram0" else "gpu0")
    roles = ["land", "status", "use"] + draw(st.lists(st.sampled_from(["land", "status", "use", "flush"]), max_size=3))
    roles = ["land"] + draw(st.permutations(roles[1:]))
    edges: list[Edge] = []
    for i, role in enumerate(roles):
        after = _mostly_chained(draw, i)
        kw: dict = {}
        if role == "land":
            dev, hook, action = "nic0", "rx", "move"
            if home == "dram0" and draw(st.booleans()):  # a third-party copy from GPU memory, unpinned
                kw.update(src=draw(footprints(gsrc)), dst=draw(footprints(frame)))
            else:
                kw.update(src=draw(footprints(src)), dst=draw(footprints(frame)))
                if draw(st.integers(0, 2)) == 0:
                    kw["via"] = tuple(draw(st.sampled_from(routes)))
        elif role == "status":
            # the frame's own host, mostly: the GPU when the frame is in its memory
            dev = draw(st.sampled_from(["gpu0"] * 3 + ["cpu0"] if home == "hbm0" else ["cpu0"] * 4 + ["cpu1", "gpu0"]))
            action, hook, kw["src"] = "read", ("launch" if dev == "gpu0" else "irq"), draw(footprints(icr))
        elif role == "use":
            dev, action = draw(st.sampled_from(["cpu0"] * 3 + ["gpu0"])), "read"
            hook, kw["src"] = ("launch" if dev == "gpu0" else "irq"), draw(footprints(frame))
        else:
            dev, hook, action = "nic0", "rx", "flush"
            kw["flushes"] = (draw(st.sampled_from([ln.name for ln in links if "nic0" in (ln.a, ln.b)])),)
        leases = tuple(Lease(q.name, to) for q in (icr, frame) for to in ("cpu0", "cpu1", "gpu0")) if i == 0 else ()
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), dev, hook, after=after, leases=leases, **kw))
    edges = with_cancels(draw, edges)
    return Policy("host_read", "host_read.fx", HOST_READ_DEVICES, links, spaces, regions, (), (), tuple(edges), ())


READ_BACK_DEVICES = (
    Device("cpu0", DeviceKind.CPU, ("poll",)),
    Device("cpu1", DeviceKind.CPU, ("poll",)),
    Device("nic0", DeviceKind.NIC, ("rx", "tx")),
)


@st.composite
def read_back_policies(draw) -> Policy:
    """A random policy of 3 to 6 edges around a NIC landing a buffer in host memory (``buf`` in
    ``dram0`` on ``cpu0``) over ``pf0`` (posted, now and then ordered) and reading it back into
    its own memory (a "flushing read", specs/obligations.md FX-ORD-003: a read-back along the
    write's one route pushes its posted writes): landings, read-backs, host reads of the buffer
    and flush edges, each landing or read-back sometimes pinned to a route, with ``after``
    clauses that mostly chain each edge to the one before, and now and then a cancel
    (``with_cancels``). Sometimes a second function ``pf1`` under ``cpu1`` and the
    inter-socket link give the NIC a second route to the buffer."""
    links = (Link("pf0", "nic0", "cpu0", "pcie", draw(st.sampled_from([LinkOrder.POSTED] * 3 + [LinkOrder.ORDERED]))),)
    if draw(st.integers(0, 2)) == 0:
        links += (Link("pf1", "nic0", "cpu1", "pcie", LinkOrder.POSTED), Link("upi0", "cpu0", "cpu1", "smp", LinkOrder.ORDERED))
    routes = simple_paths(links, "nic0", "cpu0")
    spaces = (Space("dram0", "cpu0", 0, 4096), Space("nicmem", "nic0", 0, 4096))
    regions = (Region("src", "src", "nicmem", 0, 256, "nic0", init=True), Region("buf", "buf", "dram0", 0, 256, "nic0"),
               Region("scratch", "scratch", "nicmem", 1024, 256, "nic0"))
    src, buf, scratch = regions
    roles = ["land", "readback", "use"] + draw(st.lists(st.sampled_from(["land", "readback", "use", "flush"]), max_size=3))
    roles = ["land"] + draw(st.permutations(roles[1:]))
    edges: list[Edge] = []
    for i, role in enumerate(roles):
        after = _mostly_chained(draw, i)
        kw: dict = {}
        if role in ("land", "readback"):
            dev, hook, action = "nic0", "rx" if role == "land" else "tx", "move"
            if role == "land":
                kw.update(src=draw(footprints(src)), dst=draw(footprints(buf)))
            else:
                kw.update(src=draw(footprints(buf)), dst=draw(footprints(scratch)))
            if draw(st.integers(0, 2)) == 0:
                kw["via"] = tuple(draw(st.sampled_from(routes)))
        elif role == "use":
            dev, hook, action = "cpu0", "poll", "read"
            kw["src"] = draw(footprints(buf))
        else:
            dev, hook, action = "nic0", "tx", "flush"
            kw["flushes"] = (draw(st.sampled_from([ln.name for ln in links if "nic0" in (ln.a, ln.b)])),)
        leases = (Lease("buf", "cpu0"),) if i == 0 else ()
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), dev, hook, after=after, leases=leases, **kw))
    edges = with_cancels(draw, edges)
    return Policy("read_back", "read_back.fx", READ_BACK_DEVICES, links, spaces, regions, (), (), tuple(edges), ())


ROUTED_COMPLETION_DEVICES = (
    Device("cpu0", DeviceKind.CPU, ("poll",)),
    Device("nic0", DeviceKind.NIC, ("rx", "tx")),
    Device("gpu0", DeviceKind.GPU, ("launch",)),
    Device("sw0", DeviceKind.PCIE_SWITCH, ()),
    Device("nic1", DeviceKind.NIC, ("rx",)),
)


@st.composite
def routed_completion_policies(draw) -> Policy:
    """A random policy of 3 to 5 edges around a NIC landing a frame in host memory and writing a
    completion entry, where what decides is the route each takes (specs/obligations.md section 1,
    posted rule, completion entries; ``PolicyGraph.leg_route``): landings of ``frame`` by the
    NIC, as writes or as third-party copies from GPU memory (half the time pinned to a route
    through the NIC where there is one: only the pin states that the NIC's engine issues the
    writes), completion entries into ``cq`` that notify a landing (now and then pinned),
    reads of the frame by the host or the NIC (a read-back), polls of ``cq`` and flush edges,
    with ``after`` clauses that mostly chain each edge to the one before, and now and then a
    cancel (``with_cancels``). Entries write 1 to 128 bytes of ``cq`` (one aligned 64-byte
    block or two), and now and then a landing notifies an earlier edge itself (a 256-byte
    entry: polled, it may be seen in part). The fabric is one of three: a chain ``gpu0 -- nic0 --
    cpu0`` (its link to the host now and then of kind ``cxl``, over which no entry counts), a
    switch ``sw0`` under which all three hang (the path between a copy's ends is beside the NIC,
    and the route through it visits the switch twice: a copy cannot be pinned), or a socket-direct NIC with two functions
    ``pf0`` and ``pf1`` to the host (two paths: only pins give one route), or a chain ``gpu0 --
    nic1 == nic0 -- cpu0`` over a network link (``rdma`` or ``ethernet``): the copy's bytes reach
    the NIC as packets, so its own engine writes them, pinned or not (``vocab.NETWORK_KINDS``).
    Links are posted, now and then ordered or ``unordered``."""
    order = lambda: draw(st.sampled_from([LinkOrder.POSTED] * 4 + [LinkOrder.ORDERED, LinkOrder.UNORDERED]))  # noqa: E731
    shape = draw(st.sampled_from(["chain", "switch", "socket", "network"]))
    if shape == "chain":  # the NIC's link to the host is now and then not PCIe: no entry counts over it
        links = (Link("g0", "gpu0", "nic0", "pcie", order()),
                 Link("pf0", "nic0", "cpu0", draw(st.sampled_from(["pcie"] * 3 + ["cxl"])), order()))
    elif shape == "switch":
        links = (Link("g0", "gpu0", "sw0", "pcie", order()), Link("d0", "nic0", "sw0", "pcie", order()),
                 Link("up0", "sw0", "cpu0", "pcie", order()))
    elif shape == "socket":
        links = (Link("g0", "gpu0", "nic0", "pcie", order()), Link("pf0", "nic0", "cpu0", "pcie", order()),
                 Link("pf1", "nic0", "cpu0", "pcie", order()))
    else:  # the GPU behind a remote NIC: a copy from it is an RDMA READ, whose bytes reach nic0 as packets
        links = (Link("g0", "gpu0", "nic1", "pcie", order()),
                 Link("wire", "nic1", "nic0", draw(st.sampled_from(["rdma", "ethernet"])), LinkOrder.ORDERED),
                 Link("pf0", "nic0", "cpu0", draw(st.sampled_from(["pcie"] * 3 + ["cxl"])), order()))
    spaces = (Space("dram0", "cpu0", 0, 4096), Space("nicbar", "nic0", 0, 4096), Space("hbm0", "gpu0", 0, 4096))
    regions = (Region("src", "src", "nicbar", 1024, 256, "nic0", init=True), Region("gsrc", "gsrc", "hbm0", 1024, 256, "nic0", init=True),
               Region("frame", "frame", "dram0", 0, 256, "nic0"), Region("cq", "cq", "dram0", 1024, 128, "nic0", init=True),
               Region("echo", "echo", "nicbar", 2048, 256, "nic0"))
    src, gsrc, frame, cq, echo = regions
    to_host = simple_paths(links, "nic0", "cpu0")
    copies = routes_through(links, "gpu0", "cpu0", "nic0")
    roles = ["land", "cqe", "use"] + draw(st.lists(st.sampled_from(["land", "cqe", "use", "poll", "flush", "readback"]), max_size=2))
    roles = ["land"] + draw(st.permutations(roles[1:]))
    edges: list[Edge] = []
    for i, role in enumerate(roles):
        after = _mostly_chained(draw, i)
        kw: dict = {}
        if role == "land":
            dev, hook, action = "nic0", "rx", "move"
            if draw(st.integers(0, 2)):  # a third-party copy from GPU memory
                kw.update(src=draw(footprints(gsrc)), dst=draw(footprints(frame)))
                if copies and draw(st.booleans()):
                    kw["via"] = tuple(draw(st.sampled_from(copies)))
            else:
                kw.update(src=draw(footprints(src)), dst=draw(footprints(frame)))
                if draw(st.integers(0, 2)) == 0:
                    kw["via"] = tuple(draw(st.sampled_from(to_host)))
            if i and draw(st.integers(0, 3)) == 0:  # a landing that is itself an entry: its bytes are polled
                kw["notifies"] = (f"e{draw(st.integers(0, i - 1))}",)
        elif role == "cqe":
            dev, hook, action, kw["dst"] = "nic0", "tx", "write", draw(footprints(cq))
            lands = [f"e{j}" for j in range(i) if roles[j] == "land"]
            kw["notifies"] = (draw(st.sampled_from(lands)),)
            if draw(st.booleans()):
                kw["via"] = tuple(draw(st.sampled_from(to_host)))
        elif role == "use":
            dev, hook, action, kw["src"] = "cpu0", "poll", "read", draw(footprints(frame))
        elif role == "poll":
            dev, hook, action, kw["src"] = "cpu0", "poll", "read", draw(footprints(cq))
        elif role == "readback":  # the NIC reads the frame back into its own memory
            dev, hook, action = "nic0", "tx", "move"
            kw.update(src=draw(footprints(frame)), dst=draw(footprints(echo)))
            if draw(st.integers(0, 2)) == 0:
                kw["via"] = tuple(reversed(draw(st.sampled_from(to_host))))
        else:
            dev = draw(st.sampled_from(["cpu0", "nic0"]))
            hook, action = ("poll" if dev == "cpu0" else "tx"), "flush"
            kw["flushes"] = (draw(st.sampled_from([ln.name for ln in links if dev in (ln.a, ln.b)])),)
        leases = tuple(Lease(q.name, "cpu0") for q in (frame, cq)) if i == 0 else ()
        edges.append(Edge(i, f"e{i}", f"e{i}", EdgeAction(action), dev, hook, after=after, leases=leases, **kw))
    edges = with_cancels(draw, edges)
    return Policy("routed_completion", "routed_completion.fx", ROUTED_COMPLETION_DEVICES, links, spaces, regions, (), (),
                  tuple(edges), ())
