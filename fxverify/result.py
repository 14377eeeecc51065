"""The result model of checking one policy: verdicts, outcomes, refutations, diagnostics.

``pipeline.check`` produces a ``CheckResult``; the gate, the cache, the worker processes, the
lowering and every renderer read it. Verdicts are three-valued (BRIEF section 1): ``proved``,
``refuted`` (with a counterexample), ``unknown`` (with a reason), and unknown is never a pass.
Emits no diagnostics.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Code, Family
from fxverify.diagnostics.model import Diagnostic
from fxverify.edits import Option
from fxverify.ir import Policy
from fxverify.obligations.witness import Witness
from fxverify.source import SourceMap

if TYPE_CHECKING:
    from fxverify.obligations.parametric import Report


class Verdict(Enum):
    """The three verdicts (BRIEF section 1). ``unknown`` is never a pass."""

    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Outcome:
    """How one obligation was discharged: its ``verdict``, and the ``method`` (``solver``,
    ``hb-reachability``, ``interval``...); ``reason`` explains ``unknown``."""

    key: str
    code: Code
    verdict: Verdict
    method: str
    reason: str = ""

    @property
    def family(self) -> Family:
        """The obligation family of the code."""
        return self.code.family


class OutcomeLog(Sequence[Outcome]):
    """The outcomes of one discharge, in obligation order, held compactly: the keys as UTF-8
    bytes in one buffer, each ended by a newline (no key holds one: keys are codes and edge
    names), and per outcome the index of its ``(code, verdict, method, reason)`` kind in a 32-bit
    array. A policy whose buffers every layer reuses has millions of obligations, and
    an ``Outcome`` object each would cost several times the key. Items are decoded on access.

    ``reserve`` adds an outcome whose verdict is not known yet (a query still pending) and
    ``decide`` sets it; an outcome read before it is decided raises ``LookupError``."""

    def __init__(self) -> None:
        # INVARIANT: every key is followed by one newline in ``_keys`` and ``_ends`` points past it;
        # no key holds a newline (keys are codes and edge names), so ``packed`` joins them as stored.
        self._keys = bytearray()
        self._ends = array("Q")
        self._ids = array("I")
        self._kinds: list[tuple[Code, Verdict, str, str] | None] = [None]  # kind 0: undecided
        self._kind_id: dict[tuple[Code, Verdict, str, str], int] = {}
        self._proved: dict[tuple[str, str], int] = {}  # (code, method) -> kind of a proof

    def _kind(self, code: Code, verdict: Verdict, method: str, reason: str) -> int:
        k = (code, verdict, method, reason)
        i = self._kind_id.get(k)
        if i is None:
            i = self._kind_id[k] = len(self._kinds)
            self._kinds.append(k)
        return i

    def append(self, key: str, code: Code, verdict: Verdict, method: str, reason: str = "") -> None:
        """Add a decided outcome."""
        self._keys += key.encode()
        self._keys += b"\n"
        self._ends.append(len(self._keys))
        if verdict is Verdict.PROVED and not reason:
            # Nearly every outcome is a proof: its kind is looked up by two strings, whose hashes
            # Python caches (an Enum in the key would be hashed in Python code each time).
            i = self._proved.get((code, method))
            if i is None:
                i = self._proved[(code, method)] = self._kind(code, verdict, method, reason)
            self._ids.append(i)
        else:
            self._ids.append(self._kind(code, verdict, method, reason))

    def reserve(self, key: str) -> int:
        """Add an outcome to be decided later; return its index."""
        self._keys += key.encode()
        self._keys += b"\n"
        self._ends.append(len(self._keys))
        self._ids.append(0)
        return len(self._ids) - 1

    def decide(self, i: int, outcome: Outcome) -> None:
        """Set the verdict of the reserved outcome ``i`` (its key stays the reserved one)."""
        self._ids[i] = self._kind(outcome.code, outcome.verdict, outcome.method, outcome.reason)

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        kind = self._kinds[self._ids[i]]
        if kind is None:
            raise LookupError(f"outcome {i} is not decided yet")
        lo = self._ends[i - 1] if i else 0
        return Outcome(self._keys[lo:self._ends[i] - 1].decode(), *kind)

    def __iter__(self) -> Iterator[Outcome]:
        return (self[i] for i in range(len(self)))

    @classmethod
    def of(cls, outcomes: Iterable[Outcome]) -> OutcomeLog:
        """A log of decided ``outcomes``, in order."""
        log = cls()
        for o in outcomes:
            log.append(o.key, o.code, o.verdict, o.method, o.reason)
        return log

    def _first_seen(self) -> list[int]:
        """The kind ids of the outcomes, each once, in order of first occurrence."""
        return list(dict.fromkeys(self._ids))

    def packed(self) -> tuple[str, list[tuple[Code, Verdict, str, str]], array]:
        """The log as the result record stores it (``gate.serialize``), without decoding an
        outcome: the keys joined by newlines, the kinds in order of first occurrence, and per
        outcome the index of its kind in that list (a 32-bit array). Raises ``LookupError`` when
        an outcome is not decided yet."""
        order = self._first_seen()
        if 0 in order:
            raise LookupError("an outcome is not decided yet")
        remap = [0] * len(self._kinds)
        for new, old in enumerate(order):
            remap[old] = new
        kinds = [k for k in (self._kinds[i] for i in order) if k is not None]
        return str(memoryview(self._keys)[:-1], "utf-8"), kinds, array("I", map(remap.__getitem__, self._ids))

    def proved_run(self, lo: int, hi: int) -> ProvedRun | None:
        """Outcomes ``lo`` to ``hi`` (exclusive) as a ``ProvedRun``, without decoding an outcome;
        ``None`` when one of them is not a plain proof (refuted, unknown or undecided): only
        proofs are reused (``pipeline.FamilyStore``), since a refutation's diagnostic and hint
        read more than its family's inputs (spans, hooks named in a fix)."""
        ids = self._ids[lo:hi]
        order = list(dict.fromkeys(ids))
        kinds = []
        for i in order:
            kind = self._kinds[i]
            if kind is None or kind[1] is not Verdict.PROVED or kind[3]:
                return None
            kinds.append((str(kind[0]), kind[2]))
        remap = {old: new for new, old in enumerate(order)}
        start = self._ends[lo - 1] if lo else 0
        keys = str(memoryview(self._keys)[start:self._ends[hi - 1] - 1], "utf-8") if hi > lo else ""
        return ProvedRun(keys, tuple(kinds), array("I", map(remap.__getitem__, ids)))

    def extend(self, run: ProvedRun) -> None:
        """Append the proofs of ``run`` (``proved_run``), in order. Raises ``KeyError`` for a code
        this fxverify does not know (a run stored by other code is never read: its key holds the
        code's fingerprint)."""
        if not run.ids:
            return
        kind = [self._kind(codes.lookup_strict(c), Verdict.PROVED, m, "") for c, m in run.kinds]
        base = len(self._keys)
        data = run.keys.encode() + b"\n"
        self._keys += data
        # every key ends at a newline (``__init__``'s invariant), so the ends are the newlines' offsets + 1
        at, ends = 0, self._ends
        for _ in range(len(run.ids)):
            at = data.index(b"\n", at) + 1
            ends.append(base + at)
        self._ids.extend(map(kind.__getitem__, run.ids))

    def kinds(self) -> list[tuple[Code, Verdict, str, str]]:
        """The ``(code, verdict, method, reason)`` kinds of the decided outcomes, each once, in
        order of first occurrence."""
        return [k for k in (self._kinds[i] for i in self._first_seen()) if k is not None]

    def tally(self) -> dict[str, Counter]:
        """``CheckResult.counts`` without decoding an outcome: per family name, a counter of
        verdicts and methods (``by:<method>``)."""
        out: dict[str, Counter] = {}
        n_of = Counter(self._ids)
        for i in self._first_seen():  # as counts() inserts them
            n = n_of[i]
            kind = self._kinds[i]
            if kind is None:
                raise LookupError("an outcome is not decided yet")
            code, verdict, method, _reason = kind
            c = out.setdefault(code.family.value, Counter())
            c[verdict.value] += n
            c[f"by:{method}"] += n
        return out


@dataclass(frozen=True)
class ProvedRun:
    """A run of consecutive proved outcomes, packed as ``OutcomeLog.proved_run`` makes them: the
    ``keys`` joined by newlines, the distinct ``(code, method)`` ``kinds`` in order of first
    occurrence, and per outcome the index of its kind (``ids``, 32-bit). The result cache stores
    one per obligation family (``gate.cache``). ``queries``: the solver queries behind the run's
    proofs that no single outcome records (a parametric proof's: ``obligations.parametric``).
    Raises nothing."""

    keys: str
    kinds: tuple[tuple[str, str], ...]
    ids: array
    queries: int = 0

    def __len__(self) -> int:
        return len(self.ids)

    def solver_proofs(self) -> int:
        """How many solver queries the run's proofs needed: the outcomes the solver proved
        (method ``solver``) and ``queries``; counted in ``CheckResult.solver_calls`` when the run
        is reused, as they were when it was made."""
        solver = {i for i, (_c, m) in enumerate(self.kinds) if m == "solver"}
        return (sum(1 for i in self.ids if i in solver) if solver else 0) + self.queries


@dataclass(frozen=True)
class Refutation:
    """A refuted obligation's decoded counterexample: the obligation's ``key`` and ``code``, its
    primary ``edges`` (ids, in role order) and the ``witness`` the solver's model gave."""

    key: str
    code: Code
    edges: tuple[int, ...]
    witness: Witness


@dataclass(frozen=True)
class HintCheck:
    """What verifying one finding's hint found (``fxverify.hints``): ``status`` is ``verified``
    (``shown`` holds the options shown, each one discharging the finding alone), ``pair``
    (``shown`` holds two options that discharge it together, and no single one did), ``none``
    (no option or pair tried did) or ``skipped`` (the policy is past the bounds of the search);
    ``tried`` counts the options and pairs applied."""

    status: str
    shown: tuple[Option, ...]
    tried: int


@dataclass
class CheckResult:
    """Everything ``check`` learned about one policy file.

    ``name`` is the declared policy name, ``None`` when the input could not be loaded. ``policy``
    is the resolved IR when this process computed the result, ``None`` when the result came from
    the result cache or a worker process (``gate.serialize``). ``outcomes`` has one entry per
    obligation, in obligation order; ``refutations`` one per refuted obligation, with its witness.
    ``solver_calls`` counts the queries the pipeline needed (the same whether the cache answered
    them or not); ``cache_hits`` and ``solved`` say how many of them the obligation cache answered
    and how many the solver decided. ``from_cache`` is True when the whole result came from the
    policy cache. ``tally``, when set, holds ``counts()`` computed before a round trip.
    ``certified`` is the number of fast-proof certificates re-validated (``None`` without
    ``--certify``) and ``certify_rejected`` how many of them failed (each an FX-INT-001).
    ``hints`` maps the key of each refuted obligation whose hint was verified to what that found
    (empty without hint verification, and for results from the cache or a worker process).
    ``reused`` names the obligation families whose proofs came from the result cache's family
    level, unchanged inputs (``pipeline.FamilyStore``); their outcomes are in ``outcomes`` as if
    discharged.
    ``parametric`` holds, per edge declaration and obligation the parametric prover took up
    (``obligations.parametric.Report``): the family, the declaration's ``file:line:col``, the code,
    the footprint position, the instances, and why it fell back to them ("" when it proved the
    obligation for every index value); empty when the prover did not run.
    """

    path: str
    policy: Policy | None
    sources: SourceMap
    outcomes: Sequence[Outcome] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    refutations: list[Refutation] = field(default_factory=list)
    seconds: float = 0.0
    solver_calls: int = 0
    name: str | None = None
    cache_hits: int = 0
    solved: int = 0
    from_cache: bool = False
    tally: dict[str, Counter] | None = None
    certified: int | None = None
    certify_rejected: int = 0
    hints: dict[str, HintCheck] = field(default_factory=dict)
    reused: tuple[str, ...] = ()
    parametric: tuple[Report, ...] = ()

    def __post_init__(self) -> None:
        if self.name is None and self.policy is not None:
            self.name = self.policy.name

    @property
    def input_error(self) -> bool:
        """True when the input could not be loaded (exit code 2)."""
        return self.name is None and not self.internal_error

    @property
    def internal_error(self) -> bool:
        """True when an internal invariant broke or the check crashed (exit code 3)."""
        return any(d.code is codes.INT_001 for d in self.diagnostics)

    @property
    def verdict(self) -> Verdict | None:
        """Overall verdict: refuted if any obligation is (not suppressed nor baselined), else
        unknown if any is (whatever severity ``--unknown`` gave it), else proved. ``None`` for
        input errors and crashes."""
        if self.name is None:
            return None
        if any(d.is_error and d.code is not codes.SMT_001 for d in self.diagnostics):
            return Verdict.REFUTED
        if any(d.active and d.code is codes.SMT_001 for d in self.diagnostics):
            return Verdict.UNKNOWN
        return Verdict.PROVED

    def unknown_reasons(self) -> set[str]:
        """The reasons of the unknown outcomes, each once; read from the kinds of an
        ``OutcomeLog`` without decoding an outcome."""
        if isinstance(self.outcomes, OutcomeLog):
            return {why for _c, v, _m, why in self.outcomes.kinds() if v is Verdict.UNKNOWN}
        return {v.reason for v in self.outcomes if v.verdict is Verdict.UNKNOWN}

    def counts(self) -> dict[str, Counter]:
        """Per family name: a counter of verdicts (``proved``...) and methods (``by:<method>``)."""
        if self.tally is not None:
            return self.tally
        if isinstance(self.outcomes, OutcomeLog):
            return self.outcomes.tally()
        out: dict[str, Counter] = {}
        for v in self.outcomes:
            c = out.setdefault(v.code.family.value, Counter())
            c[v.verdict.value] += 1
            c[f"by:{v.method}"] += 1
        return out
