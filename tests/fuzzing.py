"""Hostile-input fuzzing shared by ``tests/test_fuzz.py`` (short, deterministic) and
``bench/fuzz.py`` (long runs).

Two generators of policy text:
- ``policy_texts()``: a hypothesis strategy over ``fxverify/syntax/grammar.lark`` (``from_lark``),
  with names and numbers drawn from a small vocabulary of real policies (so resolution sometimes
  succeeds) and keywords padded with spaces (so neighbouring tokens do not merge into one name);
- ``mutate()``: byte mutations of corpus policies (bit flips, inserted, deleted and duplicated
  bytes and lines, truncation, NUL and invalid UTF-8, huge and boundary numbers, deep nesting,
  splices of other corpus files).

And two judges, each returning the list of broken promises (empty when the input was handled):
- ``judge_in_process()`` runs ``gate.run_gate`` on one file and renders the report as SARIF and
  JSON: no exception, exit code 0/1/2, every diagnostic a registered code with a span inside its
  file, an input error (exit 2) with at least one located diagnostic, reports that parse as JSON;
- ``judge_cli()`` runs ``python -m fxverify check FILE -f sarif -o OUT`` in a fresh process: exit
  code 0/1/2, no traceback, exit 2 with a ``file:line:col`` on standard error, ``OUT`` absent or
  whole JSON.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

from fxverify.diagnostics import codes
from fxverify.gate import GateRequest, run_gate
from fxverify.gate.scaffold import EXAMPLE_POLICY
from fxverify.pipeline import CheckOptions
from fxverify.smt.backend import SolverOptions

ROOT = Path(__file__).resolve().parents[1]

#: Solver limits of a fuzzed check: enough for corpus-sized policies, small enough that one input
#: cannot run for minutes (an unknown verdict is an allowed outcome, exit 1).
FUZZ_SOLVER = SolverOptions(rlimit=2_000_000, timeout_ms=2_000)

#: Corpus policies used as mutation seeds: every ``corpus/<family>/{ok,fail}/*.fx`` (not the real
#: generated policies of ``corpus/real``: large and slow, they add nothing a small one does not).
SEEDS: tuple[Path, ...] = tuple(sorted(p for p in ROOT.glob("corpus/*/*/*.fx") if p.parts[-3] != "real"))

#: Numbers a mutation writes over a number: boundaries of the 32/64/128-bit values the checker
#: and the lowering use, zero, and literals longer than Python prints (``sys.int_info``).
HOSTILE_NUMBERS: tuple[bytes, ...] = (
    b"0", b"1", b"4294967295", b"4294967296", b"18446744073709551615", b"18446744073709551616",
    str(1 << 128).encode(), str((1 << 128) + 1).encode(), b"9" * 1001, b"9" * 5000, b"0x" + b"f" * 40,
    b"0x" + b"f" * 5000, b"1_0000_0000_0000", b"0x1_0000_0000", b"4294967296 KiB", b"16 EiB", b"1 ZiB",
)

#: Byte strings a mutation inserts: NUL, invalid UTF-8, a BOM, odd whitespace, deep nesting,
#: unterminated strings and comments, and tokens of the language.
HOSTILE_BYTES: tuple[bytes, ...] = (
    b"\x00", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\r", b"\x0c", b"\t", "\u2028".encode(), b'"', b"#", b"(" * 300, b"(" * 300 + b"1" + b")" * 300, b"-" * 500 + b"1",
    b"{", b"}", b"[", b"]", b"..", b"->", b"|>", b"*", b"+", b"include \"../../etc/passwd\"\n",
    b"include \"/dev/zero\"\n", b"for i in 0..4294967296 {", b"[0..100000000]", b"policy \"p\" rlimit 0\n",
)

#: Words of the language and of real policies (grammar keywords, kinds, hooks, units, dtypes).
WORDS: tuple[str, ...] = (
    "policy", "include", "fabric", "device", "hooks", "link", "space", "on", "base", "size", "region", "in", "at",
    "owner", "dtype", "alias_set", "map", "class", "merge", "flow", "for", "if", "else", "final", "edge", "by",
    "write", "read", "move", "reduce", "release", "flush", "after", "stream", "bytes", "reuse", "rw", "alias",
    "require", "in_order", "transform", "handoff", "lease", "to", "map_read", "map_write", "update", "guard",
    "aggregate", "elem", "stride", "count", "and", "or", "not", "persistent", "init", "rlimit",
    "gpu0", "gpu1", "dpu0", "cxl0", "cpu0", "nic0", "gpu", "dpu", "nic", "cpu", "cxl_mem", "cxl_switch",
    "launch", "copy_done", "free", "rx", "tx", "dma_done", "near_mem", "doorbell", "evict",
    "pcie", "cxl", "nvlink", "rdma", "ordered", "unordered", "posted", "hbm0", "hdm0", "host0", "kv", "pool",
    "blk", "act", "w", "l", "i", "b", "KiB", "MiB", "GiB", "B", "bf16", "fp8", "fp16", "u32", "u64", "hash",
    "array", "device", "linearizable", "causal", "eventual", "local", "per_device", "add", "max", "sum",
    "quantize", "compress", "checksum", "crc32c", "move", "gather", "scatter", "replicate", "persist",
)


@dataclass
class Judgement:
    """What one fuzz input did: ``exit_code`` (``None`` when the run raised), the ``codes`` of its
    diagnostics, wall ``seconds``, and ``problems``: broken promises, empty when all held."""

    exit_code: int | None
    codes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


# -- generators ------------------------------------------------------------------------------


def _numbers(data: bytes) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(rb"\b(0[xX][0-9a-fA-F_]+|[0-9][0-9_]*)\b", data)]


def mutate(data: bytes, rng: random.Random, others: tuple[bytes, ...] = ()) -> bytes:
    """``data`` with one to four random mutations (see the module docstring); ``others`` are texts
    to splice lines from. Deterministic for a given ``rng`` state."""
    for _ in range(rng.randint(1, 4)):
        n = len(data)
        op = rng.randrange(11)
        at = rng.randint(0, n)
        if op == 0 and n:  # flip one bit
            i = rng.randrange(n)
            data = data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]
        elif op == 1:  # insert random bytes
            data = data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[at:]
        elif op == 2 and n:  # delete a run
            data = data[:at] + data[at + rng.randint(1, 64):]
        elif op == 3:  # truncate
            data = data[:at]
        elif op in (4, 5):  # duplicate or drop or swap lines
            lines = data.split(b"\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            if op == 4:
                lines.insert(j, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            data = b"\n".join(lines)
        elif op == 6:  # insert a hostile byte string
            data = data[:at] + rng.choice(HOSTILE_BYTES) + data[at:]
        elif op == 7:  # a number becomes a hostile one
            spans = _numbers(data)
            if spans:
                a, b = rng.choice(spans)
                data = data[:a] + rng.choice(HOSTILE_NUMBERS) + data[b:]
        elif op == 8:  # a word of the language, at a word boundary
            words = [m.start() for m in re.finditer(rb"\b\w", data)] or [at]
            i = rng.choice(words)
            data = data[:i] + rng.choice(WORDS).encode() + b" " + data[i:]
        elif op == 9 and others:  # splice a line of another policy
            lines = rng.choice(others).split(b"\n")
            data = data[:at] + b"\n" + rng.choice(lines) + b"\n" + data[at:]
        elif op == 10:  # replace a word with another word of the language
            spans = [m.span() for m in re.finditer(rb"[A-Za-z_][A-Za-z0-9_]*", data)]
            if spans:
                a, b = rng.choice(spans)
                data = data[:a] + rng.choice(WORDS).encode() + data[b:]
    return data


def _literal_terminals() -> dict[str, str]:
    """Terminal name -> text for the grammar's keyword and punctuation terminals (fixed strings)."""
    from lark.lexer import PatternStr

    from fxverify.syntax.parse import parser

    return {t.name: t.pattern.value for t in parser().terminals if isinstance(t.pattern, PatternStr)}


#: The declarations generated edges are appended to: ``fxverify init``'s example policy, one more
#: region and a map, so that the names in ``FLOW_NAMES`` and ``EDGE_HEADS`` resolve and generated
#: edges reach the obligations and the solver.
FLOW_BASE = EXAMPLE_POLICY + """region act in hbm0 at 0x1000_0000 size 64 MiB owner gpu0 dtype bf16
map blk: array<u32, u32>[64] class linearizable
"""

#: Names generated clauses use: those of ``FLOW_BASE``, the edges ``e0``..``e3`` and a few words
#: of clauses.
FLOW_NAMES = ("kv", "act", "spill_slot", "gpu0", "cxl0", "e0", "e1", "e2", "e3", "blk", "copy", "fp8", "bf16",
              "quantize", "checksum", "crc32c", "sum", "free", "KiB", "MiB")

#: Edge heads that resolve against ``FLOW_BASE``; generated clauses follow them.
EDGE_HEADS = ("write kv by gpu0.launch", "move kv -> spill_slot by gpu0.copy_done", "read act by gpu0.launch",
              "move act -> kv by gpu0.copy_done", "write kv[0, +4 KiB] by gpu0.launch",
              "move kv[0, +1 MiB] -> spill_slot by gpu0.copy_done", "release kv free")


def _reachable_terminals(grammar, start: str) -> set[str]:
    """Names of the terminals that rule ``start`` of the lark ``grammar`` can produce."""
    rules: dict[str, list] = {}
    for r in grammar.rules:
        rules.setdefault(r.origin.name, []).append(r.expansion)
    seen, todo, terms = {start}, [start], set()
    while todo:
        for expansion in rules.get(todo.pop(), []):
            for sym in expansion:
                if sym.is_term:
                    terms.add(sym.name)
                elif sym.name not in seen:
                    seen.add(sym.name)
                    todo.append(sym.name)
    return terms


def policy_texts() -> st.SearchStrategy[str]:
    """Policy texts from the grammar (``hypothesis.extra.lark.from_lark``): whole files from the
    ``start`` rule, with names from ``WORDS`` and numbers from ``HOSTILE_NUMBERS`` (mostly small
    sizes); or ``FLOW_BASE`` and a flow of edges ``e0``.. with heads from ``EDGE_HEADS`` and
    clauses generated from the ``clause`` rule over ``FLOW_NAMES``, so many texts are real
    policies with edges that reach the obligations and the solver. Keyword terminals are padded with spaces so that neighbouring
    tokens do not merge into one name. Every text follows the grammar, though not always the
    contextual lexer (a name that is a keyword where it stands)."""
    from hypothesis.extra.lark import from_lark
    from lark import Lark

    from fxverify.syntax.parse import _GRAMMAR

    grammar = Lark(_GRAMMAR.read_text(encoding="utf-8"), parser="lalr", lexer="contextual")
    small = st.sampled_from(["0", "1", "2", "4", "8", "16", "64", "4096", "0x1000", "0x80_0000_0000", "1_024"])
    ints = st.one_of(small, small, small, st.sampled_from([n.decode() for n in HOSTILE_NUMBERS if b" " not in n]),
                     st.integers(0, 1 << 70).map(str))

    def explicit(names: tuple[str, ...]) -> dict[str, st.SearchStrategy[str]]:
        out = {
            "NAME": st.sampled_from([w for w in names if re.fullmatch(r"[A-Za-z_]\w*", w)]).map(lambda w: f" {w} "),
            "INT": ints.map(lambda s: f" {s} "),
            "STRING": st.sampled_from(['"p"', '"llama"', '""', '"a\\"b"', '"shared.fx"', '"../x.fx"']).map(lambda s: f" {s} "),
            "PERSISTENT": st.just(" persistent "),
            "COMMENT": st.sampled_from(["# c\n", "# expect: FX-ORD-002\n", '# fx: allow FX-ORD-002 reason "x"\n']),
            "WS": st.sampled_from([" ", "\n", "\t"]),
        }
        out.update({name: st.just(f" {text} ") for name, text in _literal_terminals().items()})
        return out

    files = from_lark(grammar, start="start", explicit=explicit(WORDS))
    # from_lark refuses explicit strategies for terminals its start rule never reaches.
    used = _reachable_terminals(grammar, "clause") | set(grammar.ignore_tokens)
    clause = from_lark(grammar, start="clause", explicit={k: v for k, v in explicit(FLOW_NAMES).items() if k in used})
    edge = st.tuples(st.sampled_from(EDGE_HEADS), st.lists(clause, max_size=3)).map(lambda hc: hc[0] + " " + " ".join(hc[1]))

    def flow(edges: list[str]) -> str:
        return FLOW_BASE + "flow f {\n" + "".join(f"  edge e{i}: {e}\n" for i, e in enumerate(edges)) + "}\n"

    flows = st.lists(edge, min_size=1, max_size=4).map(flow)
    return st.one_of(files, flows)


# -- judges -------------------------------------------------------------------------------------


_LOCATED = re.compile(r"--> [^\n]+:\d+:\d+")


def _span_problems(report) -> list[str]:
    out = []
    for r in report.results:
        for d in r.diagnostics:
            if codes.lookup(str(d.code)) is None:
                out.append(f"unregistered code {d.code!s}")
            for label in ([d.primary] if d.primary is not None else []) + list(d.related):
                sf = r.sources.get(label.span.file)
                if sf is None:
                    out.append(f"{d.code!s}: span in `{label.span.file}`, a file the check did not read")
                elif not 0 <= label.span.start <= label.span.end <= len(sf.text):
                    out.append(f"{d.code!s}: span [{label.span.start}, {label.span.end}) outside "
                               f"`{label.span.file}` ({len(sf.text)} characters)")
    return out


def judge_in_process(path: str, solver: SolverOptions = FUZZ_SOLVER) -> Judgement:
    """Check ``path`` with ``gate.run_gate`` (no cache) and render it as SARIF and JSON; see the
    module docstring for the promises checked. Never raises: an exception is a problem."""
    from fxverify.render.json import report_to_json
    from fxverify.render.sarif import report_to_sarif
    from fxverify.render.text import render_report, to_plain

    t0 = time.perf_counter()
    try:
        report = run_gate(GateRequest(paths=(path,), check=CheckOptions(solver=solver)))
        texts = {"sarif": report_to_sarif(report), "json": report_to_json(report)}
        to_plain(render_report(report))
    except Exception as exc:  # noqa: BLE001 - the promise under test is that nothing escapes
        import traceback

        return Judgement(None, [], time.perf_counter() - t0,
                         [f"uncaught {type(exc).__name__}: {exc}"[:300] + "\n" + traceback.format_exc(limit=-4)])
    j = Judgement(report.exit_code, sorted({str(d.code) for r in report.results for d in r.diagnostics} |
                                           {str(d.code) for d in report.problems}), time.perf_counter() - t0)
    if report.exit_code not in (0, 1, 2):
        j.problems.append(f"exit code {report.exit_code}: " + "; ".join(
            f"{d.code!s} {d.message}"[:300] for r in report.results for d in r.diagnostics if d.code is codes.INT_001))
    j.problems += _span_problems(report)
    located = any(d.primary is not None for r in report.results for d in r.diagnostics if d.is_error)
    unreadable = any(r.input_error and not r.sources.paths() for r in report.results)  # no line to name
    if report.exit_code == 2 and not located and not unreadable:
        j.problems.append("input error without a located diagnostic")
    for kind, text in texts.items():
        try:
            json.loads(text)
        except ValueError as err:
            j.problems.append(f"{kind} report is not JSON: {err}")
    return j


def judge_cli(path: str, out: str, timeout: float = 120.0) -> Judgement:
    """Run ``python -m fxverify check PATH --no-cache -q -f sarif -o OUT`` (``OUT`` removed first)
    and check the promises of the module docstring. A run over ``timeout`` seconds is a problem."""
    if os.path.exists(out):
        os.unlink(out)
    cmd = [sys.executable, "-m", "fxverify", "check", path, "--no-cache", "-q", "-f", "sarif", "-o", out,
           "--rlimit", str(FUZZ_SOLVER.rlimit), "--timeout", str(FUZZ_SOLVER.timeout_ms)]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                           env={**os.environ, "NO_COLOR": "1"})
    except subprocess.TimeoutExpired:
        return Judgement(None, [], time.perf_counter() - t0, [f"no answer within {timeout} s"])
    j = Judgement(r.returncode, sorted(set(re.findall(r"FX-[A-Z]+-\d{3}", r.stderr + r.stdout))),
                  time.perf_counter() - t0)
    if r.returncode not in (0, 1, 2):
        j.problems.append(f"exit code {r.returncode}: {r.stderr[-600:]}")
    if "Traceback" in r.stderr or "Traceback" in r.stdout:
        j.problems.append(f"traceback: {r.stderr[-600:]}")
    sarif = None
    if os.path.exists(out):
        try:
            with open(out, encoding="utf-8") as fh:
                sarif = json.load(fh)
        except ValueError as err:
            j.problems.append(f"`-o` file is not whole JSON: {err}")
    text = r.stderr + r.stdout
    if r.returncode == 2:
        results = [x for run in (sarif or {}).get("runs", []) for x in run.get("results", [])]
        j.codes = sorted(set(j.codes) | {x.get("ruleId", "") for x in results})
        located = any("startLine" in loc.get("physicalLocation", {}).get("region", {})
                      for x in results if x.get("level") == "error" for loc in x.get("locations", []))
        if not (_LOCATED.search(text) or located):
            j.problems.append(f"exit 2 without a diagnostic naming file:line:col: {text[-600:]}")
    return j
