"""The fabric view: devices with their hooks and address spaces, and the links between them with
their kind and ordering (``ordered``: FIFO completion; ``unordered``; ``posted``: a write is
visible at the receiver only after a flush; BRIEF section 1).

Takes a policy (and optionally a ``Focus``); produces a ``model.Picture`` (undirected). With a
focus, the devices and links the finding's bytes may cross are marked, and for a missing path
(FX-HOOK-001) the devices reachable from its source are marked and the missing link is drawn.
Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.ir import Policy
from fxverify.views.focus import Focus
from fxverify.views.model import Arrow, Node, Picture


def size_text(n: int) -> str:
    """A byte count in the largest binary unit that divides it (``80 GiB``, ``33792 B``)."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} B"


def fabric_view(policy: Policy, focus: Focus | None = None) -> Picture:
    """The fabric of ``policy`` as a picture: one node per device (kind, hooks, spaces), one line
    per link (label: name when declared, kind and ordering)."""
    spaces: dict[str, list[str]] = {}
    for sp in policy.spaces:
        where = f" at {sp.base:#x}" if sp.base else ""
        persistent = " persistent" if sp.persistent else ""
        spaces.setdefault(sp.device, []).append(f"{sp.name}: {size_text(sp.size)}{where}{persistent}")
    marked = set(focus.devices) | set(focus.reach) if focus is not None else set()
    nodes = []
    for d in policy.devices:
        hooks = f"hooks: {', '.join(d.hooks)}" if d.hooks else "no hooks"
        lines = (d.name, d.kind.value, hooks, *(f"space {s}" for s in spaces.get(d.name, ())))
        nodes.append(Node(f"d_{d.name}", lines, "device", tip=" \n".join(lines), focus=d.name in marked, tag=d.kind.value))
    arrows = []
    for ln in policy.links:
        label = f"{ln.kind} {ln.order.value}"
        tip = f"link {ln.name}: {ln.a} -- {ln.b}, {ln.kind}, {ln.order.value}"
        arrows.append(Arrow(f"d_{ln.a}", f"d_{ln.b}", ln.order.value, label, tip, focus is not None and ln.name in focus.links))
    notes = []
    if focus is not None and focus.no_path is not None:
        a, b = focus.no_path
        arrows.append(Arrow(f"d_{a}", f"d_{b}", "missing", "no fabric path", f"no link joins {a} to {b}", True))
        notes.append(f"reachable from {a}: {', '.join(sorted(focus.reach))}; {b} is not")
    title = f"fabric of {policy.name}"
    return Picture("fabric", title, False, tuple(nodes), tuple(arrows), (), tuple(notes))
