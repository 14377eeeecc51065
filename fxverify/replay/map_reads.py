"""What a plain map read may return: the values a ``map_read`` or ``aggregate`` may legally
observe in one concrete schedule under its map's consistency class.

Takes a ``World`` (happens-before recomputed by the simulator), a schedule and one read (edge id,
position among the edge's map operations); produces the set of values the read may observe
(``allowed_values``), or that set for every plain read of the schedule (``read_values``). A plain
read decides nothing in the policy, so it carries no obligation (BRIEF section 3: FX-MAP-003 is
for guards); this module is its *specification*, which ``lower --kernel-run`` checks the kernel's
observed values against (``specs/obligations.md`` "Maps", ``specs/lowering.md`` section 8).

The rule (``specs/obligations.md`` section 1, "Maps"; the class words of BRIEF section 1). Every
map operation takes effect at one instant inside its edge's interval ``[s, f)``. A read observes
the writes that took effect before its own instant, applied in the order they took effect, from
the initial value 0: a ``map_write`` stores its value, an ``update`` folds it into the entry with
the map's ``merge`` (``vocab.OPERATORS``; ``last``, or no merge, stores). So a write ``w`` is
*possible* for a read ``r`` only when ``s(w) < f(r)`` (it can take effect before the read does),
and which possible writes are visible, and in which order, is what the class constrains:

- ``linearizable``, ``local(dev)``, ``per_device`` (on the read's slot): real time. Every write
  that finished before the read started (``f(w) <= s(r)``) is visible; a visible write makes
  every write that finished before it started visible too; visible writes apply in an order that
  extends real time (``f(a) <= s(b)`` puts ``a`` first). These are exactly the outcomes of
  choosing one instant per operation inside its interval (Herlihy and Wing, "Linearizability",
  TOPLAS 1990): the visible set and order are those of the instants before the read's.
- ``causal``: happens-before, not real time. Every write that happens-before the read is
  visible; a visible write makes every write that happens-before it visible (causal memory,
  Ahamad et al., Distributed Computing 1995); visible writes apply in an order that extends
  happens-before. A write that finished earlier in real time but is unordered with the read may
  or may not be visible.
- ``eventual``: no visibility is guaranteed and replicas may apply writes in any order: any
  subset of the possible writes, in any order.
- ``const``: entries are set before the flow and programs cannot write them (the lowering loads
  the map with ``BPF_F_RDONLY_PROG``; a write is FX-MAP-005): every read sees the initial value,
  whatever the schedule and whatever writes the policy (wrongly) makes.

Writes of the read's own edge are possible but never required (the edge's operations have no
order among themselves). A ``per_device`` entry has one slot per device: a plain read sees only
its own device's slot (the writes made on its device), an ``aggregate`` the sum of every slot,
with one instant for the whole read (so the slots are constrained together). An ``aggregate`` of
a map without slots is a plain read. Values are unbounded integers unless ``bits`` is given, when
every slot wraps at ``bits`` as the map's storage does (the sum of an aggregate does not wrap).

Emits no diagnostics; imports nothing from ``fxverify.smt`` or ``fxverify.obligations``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxverify.ir import MapOpKind
from fxverify.replay.world import Schedule, World
from fxverify.vocab import OPERATORS, ClassKind

#: Read kinds this module specifies (guards decide, and are checked as FX-MAP-003 instead).
PLAIN_READS = (MapOpKind.READ, MapOpKind.AGGREGATE)
#: Visible-set states (down-sets of the possible writes) explored per read before giving up:
#: ``allowed_values`` returns ``None`` past it, which callers must treat as "not checked".
STATE_LIMIT = 1 << 15


@dataclass(frozen=True)
class _Write:
    """One write of the read's entry: its edge, whether it stores (``map_write``, or an update whose
    merge stores) and its operand, and the slot index it writes."""

    edge: int
    stores: bool
    value: int
    slot: int


def read_values(world: World, sched: Schedule, bits: dict[str, int] | None = None
                ) -> dict[tuple[int, int], frozenset[int] | None]:
    """Every plain read (``map_read``, ``aggregate``) of an edge in ``sched``: ``(edge id, position
    among the edge's map operations) -> allowed_values(...)``, in edge then position order.
    ``bits`` maps a map name to the width its slots wrap at (absent: unbounded). Never raises for
    a valid schedule."""
    out: dict[tuple[int, int], frozenset[int] | None] = {}
    for e in sorted(sched):
        for i, op in enumerate(world.policy.edges[e].map_ops):
            if op.kind in PLAIN_READS and world.policy.map(op.map).map_type != "ringbuf":
                out[(e, i)] = allowed_values(world, sched, e, i, (bits or {}).get(op.map))
    return out


def allowed_values(world: World, sched: Schedule, reader: int, op_index: int, bits: int | None = None
                   ) -> frozenset[int] | None:
    """The values map operation ``op_index`` of edge ``reader`` (a ``map_read`` or ``aggregate``)
    may observe in ``sched`` (edge id -> ``(start, finish)`` in ns; it must contain ``reader`` and
    be a valid schedule), by the rule of this module's docstring. ``bits`` is the slot width the
    values wrap at (``None``: unbounded).

    Returns the set of values; ``None`` when it is not defined (a merge with no fold that does not
    store: ``first``, ``sub``, ``avg``) or when more than ``STATE_LIMIT`` visible sets would have
    to be explored (too many concurrent writers). Raises ``ValueError`` when the operation is not
    a plain read, ``KeyError``/``IndexError`` for an edge or operation that does not exist."""
    pol = world.policy
    edge = pol.edges[reader]
    rop = edge.map_ops[op_index]
    if rop.kind not in PLAIN_READS:
        raise ValueError(f"map operation {op_index} of edge {reader} is a {rop.kind.value}, not a plain read")
    decl = pol.map(rop.map)
    kind = decl.cls.kind
    slotted = kind is ClassKind.PER_DEVICE
    whole = slotted and rop.kind is MapOpKind.AGGREGATE  # sums every device's slot
    if kind is ClassKind.CONST:
        return frozenset({0})
    merge = OPERATORS.get(decl.merge or "")
    if merge is not None and merge.fold is None and merge.name != "last":
        return None
    devices = [d.name for d in pol.devices]
    key = rop.key or 0
    s_r, f_r = sched[reader]
    writes: list[_Write] = []
    for w in sorted(sched):
        ew = pol.edges[w]
        if slotted and not whole and ew.device != edge.device:
            continue  # another device's slot
        if sched[w][0] >= f_r:
            continue  # starts after the read has finished: it cannot take effect before it
        for op in ew.map_ops:
            if op.map != rop.map or (op.key or 0) != key or op.kind not in (MapOpKind.WRITE, MapOpKind.UPDATE):
                continue
            stores = op.kind is MapOpKind.WRITE or merge is None or merge.fold is None
            writes.append(_Write(w, stores, op.value or 0, devices.index(ew.device) if whole else 0))
    n = len(writes)

    def first(a: _Write, b: _Write) -> bool:
        """``a`` must be visible when ``b`` is, and apply before it."""
        if a.edge == b.edge:
            return False
        if kind is ClassKind.EVENTUAL:
            return False
        if kind is ClassKind.CAUSAL:
            return world.hb(a.edge, b.edge)
        return sched[a.edge][1] <= sched[b.edge][0]

    if kind is ClassKind.EVENTUAL:
        required = 0
    elif kind is ClassKind.CAUSAL:
        required = sum(1 << i for i, w in enumerate(writes) if world.hb(w.edge, reader))
    else:
        required = sum(1 << i for i, w in enumerate(writes) if sched[w.edge][1] <= s_r)
    before = [sum(1 << j for j in range(n) if first(writes[j], writes[i])) for i in range(n)]
    mod = (1 << bits) if bits is not None else None
    slots = len(devices) if whole else 1

    def apply(vals: tuple[int, ...], w: _Write) -> tuple[int, ...]:
        x = w.value % mod if mod else w.value
        new = x if w.stores else merge.fold(vals[w.slot], x)  # type: ignore[union-attr]
        return vals[:w.slot] + ((new % mod) if mod else new,) + vals[w.slot + 1:]

    # Breadth-first over the down-sets of the possible writes (under ``first``): a state is the
    # set of writes applied so far and the slot values some order of them leaves. When no write
    # stores, every update folds with a commutative, associative merge and order never matters,
    # so the required writes (a down-set themselves) start applied.
    start: tuple[int, ...] = (0,) * slots
    if any(w.stores for w in writes):
        required_first = 0
    else:
        required_first = required
        for i, w in enumerate(writes):
            if required >> i & 1:
                start = apply(start, w)
    layer: dict[int, set[tuple[int, ...]]] = {required_first: {start}}
    out: set[int] = set()
    seen = 0
    while layer:
        nxt: dict[int, set[tuple[int, ...]]] = {}
        for mask, vals in layer.items():
            seen += 1
            if seen > STATE_LIMIT:
                return None
            if mask & required == required:
                out |= {sum(v) for v in vals}
            for i in range(n):
                if not mask >> i & 1 and before[i] & mask == before[i]:
                    nxt.setdefault(mask | 1 << i, set()).update(apply(v, writes[i]) for v in vals)
        layer = nxt
    return frozenset(out)
