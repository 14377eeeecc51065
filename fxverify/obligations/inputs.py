"""What each obligation family reads of a policy, as one digest per family.

A family's obligations, and the proofs of them, are a function of the resolved policy
(``ir.Policy``) and the check's options alone. ``family_digests`` hashes, per family, the part of
the policy that family reads: after a one-edge edit, a family whose digest did not change has
the same obligations with the same proofs, so the result cache (``gate.cache``, the ``families``
level) reuses them and only the other families are generated and discharged again (issue "Scale",
item 6).

What a family reads is declared the conservative way round: every field of the policy is read
by every family, except

- source positions (every ``Span``): they place diagnostics and never decide a verdict; only
  proofs are reused (``result.OutcomeLog.proved_run``), and a proof carries no position;
- the policy's inline suppressions (``Policy.suppressions``): the check applies them to its
  diagnostics after the discharge (``pipeline.conclude``), and no obligation reads them;
- the families as written (``Policy.shapes``): the parametric prover (``obligations.parametric``)
  reads them to prove for every index value what the unrolled instances would be proved, so
  they decide how an obligation is proved, never whether (a reused family reports the methods
  of the check that stored it);
- the fields ``NARROW`` names, each read (for a verdict) only by the families it lists.

An entry of ``NARROW`` is a soundness claim, checked by reading every use of the field in
``fxverify.obligations`` and ``fxverify.graph`` (the places a use would be, and nothing else):
a family whose digest leaves out a field it reads could reuse a proof the edit broke. The
property test ``tests/test_incremental.py`` edits random policies and compares the reused
result with a fresh check, and a test fails when a new ``ir.Edge`` field appears, so that each
is placed on purpose. Sharded checks (``gate.shards``: ``--jobs N`` on a big policy) neither
read nor fill the families level. Emits no diagnostics.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import weakref
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from operator import attrgetter
from types import SimpleNamespace
from typing import Any

from fxverify import ir
from fxverify.diagnostics.codes import OBLIGATION_FAMILIES, Family
from fxverify.ir import Edge
from fxverify.source import Span

#: ``ir.Edge`` fields whose values decide the verdicts of the listed families only. ``hook``: the
#: hook that drives an edge is read by FX-HOOK-002 (a declared hook, ``hooks.DeclaredHook``); the
#: other families name it only in fix hints of refutations (``edits.Drive``), which are never
#: reused. ``reuse`` and ``rw``: carried for the lowering (specs/lowering.md), read by no obligation.
NARROW: dict[str, frozenset[Family]] = {
    "hook": frozenset({Family.HOOKS}),
    "reuse": frozenset(),
    "rw": frozenset(),
}

def _span() -> None:
    """Stands for every ``Span`` in a digest (never called: the pickle is hashed, not loaded)."""


@functools.cache
def _reducers() -> dict[type, Callable[[Any], tuple]]:
    """The pickler's reducers: every dataclass of the IR as its type and its fields' values,
    read by ``operator.attrgetter`` in C (the default reduction of a slotted dataclass runs
    Python code per object, five times slower), without its ``Span`` fields, the ``NARROW``
    fields of an ``Edge`` and the derived name index of the ``Policy``; a ``Span`` anywhere else
    pickles as ``_span``; the ``Policy``'s suppressions and shapes are left out (the module docstring)."""
    table: dict[type, Callable[[Any], tuple]] = {Span: lambda _s: (_span, ())}
    for cls in {c for c in vars(ir).values() if isinstance(c, type) and is_dataclass(c)} - {Span}:
        names = [f.name for f in fields(cls) if f.type not in ("Span", Span) and not f.name.startswith("_")
                 and not (cls is Edge and f.name in NARROW) and not (cls is ir.Policy and f.name in ("suppressions", "shapes"))]
        get = attrgetter(*names) if names else (lambda _o: ())
        table[cls] = (lambda g, c: (lambda o: (c, (g(o),))))(get, cls)
    return table


class _Canonical(pickle.Pickler):
    """Pickles a policy for hashing. ``fast`` mode writes no memo references, so the bytes depend
    on values only, not on which equal objects the resolver happened to share; the IR is acyclic
    (frozen dataclasses of tuples), which fast mode needs. Equal bytes mean equal values (each
    object is written as its type and its fields' values), so a digest match is never a false
    reuse; an object of a type ``_reducers`` does not list is pickled the default way, which is
    as faithful."""

    def __init__(self, out: Any) -> None:
        super().__init__(out, protocol=5)
        self.fast = True
        self.dispatch_table = _reducers()


#: The last policy whose digests were computed (a weak reference) and its digests: the gate asks
#: for them before it decides whether to split a policy (``gate.forked``), then the check of the
#: same policy object asks again. INVARIANT: an ``ir.Policy`` is never changed once the resolver
#: has built it (every later stage reads it), so its digests stay its own while it lives.
_LAST: tuple[weakref.ref, dict[Family, str]] | None = None


def family_digests(policy: ir.Policy) -> dict[Family, str]:
    """Per obligation family, the SHA-256 (hex) of what it reads of ``policy`` (the module
    docstring): equal digests of two policies mean the family generates the same obligations,
    with the same fast proofs and the same solver queries. About 0.2 s for 37k edges, computed
    once for the last policy object asked (the IR is not changed once built). Raises nothing
    (the IR is always picklable)."""
    global _LAST
    if _LAST is not None and _LAST[0]() is policy:
        return dict(_LAST[1])
    out = _digests(policy)
    _LAST = (weakref.ref(policy), out)
    return dict(out)


def _digests(policy: ir.Policy) -> dict[Family, str]:
    h = hashlib.sha256()
    _Canonical(SimpleNamespace(write=h.update)).dump(policy)  # hashed as written: never held whole
    common = h.hexdigest()
    narrow = {name: hashlib.sha256(repr([getattr(e, name) for e in policy.edges]).encode()).hexdigest()
              for name, readers in NARROW.items() if readers}
    return {fam: hashlib.sha256("\n".join([fam.value, common, *(f"{name}={narrow[name]}" for name in NARROW
                                                               if fam in NARROW[name])]).encode()).hexdigest()
            for fam in OBLIGATION_FAMILIES}
