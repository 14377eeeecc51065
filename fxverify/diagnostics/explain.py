"""Explanations of diagnostic codes: ``fxverify explain``, ``explain --list`` and ``specs/codes.md``.

Takes the code registry (``codes.REGISTRY``: each code's title, rule, why and example) and the
corpus; produces text. Each obligation code is explained with a failing policy from
``corpus/<family>/fail/`` and the change that fixes it, a unified diff to its ``ok/`` twin. Those
examples are taken from the corpus by ``python -m fxverify.diagnostics.explain --write``, which
writes ``examples.json`` next to this module (so an installed fxverify can explain without the
repository) and ``specs/codes.md``; a test keeps both in sync with the corpus and the registry.
Codes that no policy of the corpus triggers carry a short failing example and its fix in the
registry. Each code also lists the incidents of ``corpus/incidents/fail/`` whose ``# expect:``
lines name it (bugs written after public incident patterns, each with its fixed twin in
``corpus/incidents/ok/``); ``--write`` stores that index as ``incidents.json``. Emits no
diagnostics.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
import textwrap
from pathlib import Path

from fxverify.diagnostics.codes import REGISTRY, Code, CorpusExample, InlineExample

_HERE = Path(__file__).resolve().parent
EXAMPLES_FILE = _HERE / "examples.json"
INCIDENTS_FILE = _HERE / "incidents.json"
INCIDENTS_DIR = "corpus/incidents/fail"
_EXPECT = re.compile(r"#\s*expect:\s*((?:FX-[A-Z]+-\d{3}[ ,]*)+)")
_HEADER = re.compile(r"^Incident \(([^)]+)\):\s*(.+?\.)(?:\s|$)")

def _strip_comments(text: str) -> list[str]:
    return [ln for ln in text.splitlines(True) if not ln.lstrip().startswith("#")]


def build_examples(root: Path) -> dict[str, dict[str, str]]:
    """Read the corpus under ``root`` (the repository) and return, per code, the failing policy's
    path and text and the unified diff to its fixed twin (comment lines left out of the diff).
    Raises ``OSError`` when a corpus file is missing."""
    out: dict[str, dict[str, str]] = {}
    for code in REGISTRY.values():
        if not isinstance(code.example, CorpusExample):
            continue
        fail, ok = code.example.fail, code.example.fixed
        a, b = (root / fail).read_text(encoding="utf-8"), (root / ok).read_text(encoding="utf-8")
        diff = "".join(difflib.unified_diff(_strip_comments(a), _strip_comments(b), fromfile=fail, tofile=ok, n=1))
        out[code] = {"fail_path": fail, "fail": a, "fix_path": ok, "fix_diff": diff}
    return out


def incident_of(path: Path) -> tuple[str, str, list[str]]:
    """The incident a corpus file records: ``(kind, pattern, codes)``, where ``kind`` is the class
    of system (``KV-cache offload``...), ``pattern`` the first sentence of its opening comment
    (``# Incident (KIND): PATTERN. ...``) and ``codes`` the codes of its ``# expect:`` lines, sorted.
    Raises ``ValueError`` when the file does not open with such a comment, ``OSError`` when it
    cannot be read."""
    lines = path.read_text(encoding="utf-8").splitlines()
    head = []
    for ln in lines:
        if not ln.startswith("#"):
            break
        head.append(ln.lstrip("#").strip())
    m = _HEADER.match(" ".join(head))
    if m is None:
        raise ValueError(f"{path} does not open with `# Incident (KIND): PATTERN.`")
    found = {c for ln in lines if (e := _EXPECT.search(ln)) for c in re.findall(r"FX-[A-Z]+-\d{3}", e.group(1))}
    return m.group(1), m.group(2), sorted(found)


def build_incidents(root: Path) -> dict[str, list[dict[str, str]]]:
    """Per code, the incidents of ``root/corpus/incidents/fail`` that expect it, in path order:
    ``{"path", "kind", "pattern"}`` each. ``{}`` when the folder is missing; raises as
    ``incident_of``."""
    out: dict[str, list[dict[str, str]]] = {}
    folder = root / INCIDENTS_DIR
    for path in sorted(folder.glob("*.fx")) if folder.is_dir() else []:
        kind, pattern, found = incident_of(path)
        for code in found:
            out.setdefault(code, []).append({"path": f"{INCIDENTS_DIR}/{path.name}", "kind": kind, "pattern": pattern})
    return out


def load_incidents() -> dict[str, list[dict[str, str]]]:
    """The incident index shipped with fxverify (``incidents.json``); ``{}`` if the file is missing."""
    try:
        return json.loads(INCIDENTS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _incident_lines(code: Code, incidents: dict[str, list[dict[str, str]]]) -> list[str]:
    found = incidents.get(code, [])
    if not found:
        return []
    out = [f"incidents ({len(found)}; each fixed in corpus/incidents/ok/ under the same name):"]
    for inc in found:
        out += textwrap.wrap(f"{inc['path']} ({inc['kind']}): {inc['pattern']}", 100,
                             initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False)
    return ["", *out]


def load_examples() -> dict[str, dict[str, str]]:
    """The examples shipped with fxverify (``examples.json``); ``{}`` if the file is missing."""
    try:
        return json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def explain(code: Code, examples: dict[str, dict[str, str]],
            incidents: dict[str, list[dict[str, str]]] | None = None) -> str:
    """The text of ``fxverify explain CODE``: the rule, why it matters, a failing example and the
    fix (from the corpus for obligation codes, inline for input codes), then the incidents of the
    code (``incidents``, default the shipped ``incidents.json``)."""
    out = [f"{code}: {code.title}", f"family {code.family.value}, severity {code.severity.value}", "",
           f"rule: {code.rule}", f"why it matters: {code.why}", ""]
    ex = examples.get(code)
    if ex is not None:
        out += [f"failing example ({ex['fail_path']}):", "", *_indent(ex["fail"]), "",
                f"fixed ({ex['fix_path']}), as a diff:", "", *_indent(ex["fix_diff"])]
    elif isinstance(code.example, InlineExample):
        bad, good = code.example.bad, code.example.good
        out += ["failing example:", "", *_indent(bad), "", "fixed:", "", *_indent(good)]
    else:
        out += ["no example: this code reports a bug in fxverify, never a problem of the policy"]
    out += _incident_lines(code, load_incidents() if incidents is None else incidents)
    return "\n".join(out).rstrip() + "\n"


def _indent(text: str) -> list[str]:
    return ["    " + ln if ln else "" for ln in text.rstrip("\n").splitlines()]


def list_codes(prefix: str = "") -> str:
    """The text of ``fxverify explain --list``: every code with its severity and title; with
    ``prefix`` (``FX-ORD``), only the codes of that family (``FX-ORD-...``); empty when none."""
    chosen = [c for c in REGISTRY.values() if not prefix or str(c).startswith(prefix.rstrip("-") + "-")]
    w = max((len(c) for c in chosen), default=0)
    return "".join(f"{c:<{w}}  {c.severity.value:<7}  {c.title}\n" for c in chosen)


def codes_markdown(examples: dict[str, dict[str, str]],
                   incidents: dict[str, list[dict[str, str]]] | None = None) -> str:
    """``specs/codes.md``: every code of the registry with its rule, why it matters, examples and
    incidents (``incidents``, default the shipped ``incidents.json``)."""
    incidents = load_incidents() if incidents is None else incidents
    out = ["# Diagnostic codes", "",
           "Generated from the code registry (`fxverify/diagnostics/codes.py`) and the corpus by",
           "`python -m fxverify.diagnostics.explain --write`; a test keeps it in sync. `fxverify explain CODE`",
           "prints the same text.", "",
           "| code | severity | family | title |", "|---|---|---|---|"]
    out += [f"| [{c}](#{anchor(c)}) | {c.severity.value} | {c.family.value} | {c.title} |" for c in REGISTRY.values()]
    out.append("")
    for c in REGISTRY.values():
        out += [f"## {c}", "", *code_markdown(c, examples, incidents)]
    return "\n".join(out).rstrip("\n") + "\n"


def anchor(code: Code) -> str:
    """The fragment of ``code``'s section in ``specs/codes.md`` (GitHub's heading anchors: the
    heading in lower case), as in ``specs/codes.md#fx-ord-002``."""
    return code.lower()


def code_markdown(c: Code, examples: dict[str, dict[str, str]],
                  incidents: dict[str, list[dict[str, str]]] | None = None) -> list[str]:
    """The Markdown lines that explain ``c`` (its section of ``specs/codes.md`` without the heading,
    and the help of its SARIF rule): title, rule, why it matters, the failing example and its fix,
    the incidents (``incidents``, default the shipped ``incidents.json``). Ends with a blank line."""
    incidents = load_incidents() if incidents is None else incidents
    out = [f"**{c.title}** ({c.family.value}, {c.severity.value})", "",
           f"Rule: {c.rule}.", "", f"Why it matters: {c.why}.", ""]
    ex = examples.get(c)
    if ex is not None:
        out += [f"Failing (`{ex['fail_path']}`):", "", "```", ex["fail"].rstrip("\n"), "```", "",
                f"Fixed (`{ex['fix_path']}`):", "", "```diff", ex["fix_diff"].rstrip("\n"), "```", ""]
    elif isinstance(c.example, InlineExample):
        bad, good = c.example.bad, c.example.good
        out += ["Failing:", "", "```", bad, "```", "", "Fixed:", "", "```", good, "```", ""]
    if incidents.get(c):
        out += ["Incidents (each fixed in `corpus/incidents/ok/` under the same name):", ""]
        out += [f"- `{i['path']}` ({i['kind']}): {i['pattern']}" for i in incidents[c]]
        out.append("")
    return out


def main(argv: list[str]) -> int:
    """``python -m fxverify.diagnostics.explain --write [ROOT]``: regenerate ``examples.json``,
    ``incidents.json`` and ``ROOT/specs/codes.md`` from the corpus under ROOT (default: the
    repository of this module)."""
    if not argv or argv[0] != "--write":
        sys.stderr.write("usage: python -m fxverify.diagnostics.explain --write [ROOT]\n")
        return 2
    root = Path(argv[1]) if len(argv) > 1 else _HERE.parents[1]
    examples = build_examples(root)
    incidents = build_incidents(root)
    EXAMPLES_FILE.write_text(json.dumps(examples, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    INCIDENTS_FILE.write_text(json.dumps(incidents, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (root / "specs" / "codes.md").write_text(codes_markdown(examples, incidents), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
