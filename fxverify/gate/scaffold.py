"""``fxverify init DIR``: scaffold a policy repository gated by fxverify.

Takes a target folder and, optionally, the reference of an fxverify GitHub Action; produces the
files of a new policy repository: an example policy that fxverify proves, a pre-commit
configuration with a local hook that runs ``fxverify check`` on the staged policies, a GitHub
Actions workflow (SARIF upload and a Markdown job summary) and a README that explains the gate.
fxverify is not published on a package index, so the scaffold installs it from a place the user
names: the workflow stops with a clear error until ``FXVERIFY_PACKAGE`` is filled in (a path or
a git URL of the fxverify repository), or it uses the action given by ``--action``. A README
already there is kept; any other file already there is refused unless ``force``. Emits FX-IO-002
(files already there: nothing is written) and FX-IO-001 (the folder cannot be written).
"""

from __future__ import annotations

import os
from pathlib import Path

from fxverify.atomic import replace_atomically
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic

#: What to write where the user must name the fxverify package (fxverify is on no package index).
PACKAGE_PLACEHOLDER = "FILL-IN: path or git URL of the fxverify repository"

#: Files ``init`` leaves alone when they are there already (the user's own, not the gate's).
KEPT = ("README.md",)

#: The command the pre-commit hook runs; pre-commit appends the staged policy files (a staged
#: fragment re-checks the policies that include it: ``gate.discover``).
HOOK_ENTRY = "fxverify check --quiet"

EXAMPLE_POLICY = """\
# An example policy: the GPU writes a KV block, then copies it to a CXL memory expander and hands
# the block over to the expander. The copy is ordered after the write (`after attn`), so the copy
# never reads a half-written block, and the handoff makes `cxl0` the owner once the copy is done.
# Try removing `after attn` and run `fxverify check .` to see the race it prevents (FX-ORD-002),
# and the read of bytes not yet written (FX-INIT-001).
policy "example-kv-spill"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 dtype bf16
region spill_slot in hdm0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16

flow prefill {
  edge attn: write kv by gpu0.launch
  edge spill: move kv -> spill_slot by gpu0.copy_done after attn
      handoff spill_slot: gpu0 -> cxl0
  final owner spill_slot = cxl0
}
"""

PRE_COMMIT_CONFIG = f"""\
# pre-commit runs fxverify on every commit that stages a policy (install: `pre-commit install`).
# pre-commit passes the staged *.fx files, so an `exclude:` here applies; a staged fabric fragment
# re-checks the policies that include it.
#
# This local hook runs the `fxverify` installed in the environment you commit from: install it
# from the fxverify repository first (`pip install PATH-OR-GIT-URL-OF-FXVERIFY`; it is not on PyPI).
# To let pre-commit install it instead, use `language: python` and name the package:
#        language: python
#        additional_dependencies: ["{PACKAGE_PLACEHOLDER}"]
repos:
  - repo: local
    hooks:
      - id: fxverify
        name: fxverify check
        entry: {HOOK_ENTRY}
        language: system
        files: \\.fx$
        pass_filenames: true
        require_serial: true
"""


def workflow(action: str | None = None) -> str:
    """The GitHub Actions workflow that gates pull requests: with ``action`` (``owner/repo@ref``)
    it uses that fxverify action; without, it installs fxverify from ``FXVERIFY_PACKAGE`` (a
    placeholder the user fills in; the job fails with a message saying so until then), checks
    the policies, uploads SARIF and writes the Markdown job summary."""
    head = """\
name: fxverify

on:
  pull_request:
  push:
    branches: [main]

permissions:
  contents: read
  security-events: write  # upload SARIF to code scanning

jobs:
  check:
    runs-on: ubuntu-latest
"""
    if action is not None:
        return head + f"""\
    steps:
      - uses: actions/checkout@v4
      - uses: {action}
        with:
          paths: .
          # baseline: fxverify-baseline.json
"""
    return head + f"""\
    env:
      # fxverify is not on PyPI: name where pip finds it, such as
      # git+https://github.com/OWNER/fxverify@REF (or use `fxverify init --action OWNER/REPO@REF`).
      FXVERIFY_PACKAGE: ""  # {PACKAGE_PLACEHOLDER}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install fxverify
        run: |
          if [ -z "$FXVERIFY_PACKAGE" ]; then
            echo "::error file=.github/workflows/fxverify.yml::set FXVERIFY_PACKAGE to the path or git URL of fxverify"
            exit 1
          fi
          python -m pip install --quiet "$FXVERIFY_PACKAGE"
      - name: Check policies
        run: |
          set +e
          fxverify check . --quiet --format sarif -o fxverify.sarif  # add --baseline fxverify-baseline.json
          code=$?
          fxverify check . --quiet --format github
          fxverify check . --quiet --format markdown >> "$GITHUB_STEP_SUMMARY"
          exit $code
      - name: Upload SARIF
        if: ${{{{ always() && hashFiles('fxverify.sarif') != '' }}}}
        uses: github/codeql-action/upload-sarif@v3
        with:
          sarif_file: fxverify.sarif
          category: fxverify
"""


README = """\
# Data-movement policies

The policies in this repository (`*.fx`) describe how bytes move between GPUs, DPUs/NICs and CXL
memory. fxverify proves them before they merge.

## The gate

`fxverify check .` checks every policy and exits with:

| code | meaning |
|---|---|
| 0 | every obligation proved |
| 1 | a finding: a refuted obligation (with a replayed counterexample trace), or an unknown verdict |
| 2 | a policy could not be read (syntax, names, types), or a bad option |
| 3 | an internal error of fxverify |

It runs in three places:
- on your machine: install fxverify from its repository (`pip install PATH-OR-GIT-URL-OF-FXVERIFY`;
  it is not on PyPI), then `fxverify check .`;
- before each commit: `pre-commit install` (see `.pre-commit-config.yaml`);
- on each pull request: `.github/workflows/fxverify.yml` (set its `FXVERIFY_PACKAGE` first) checks
  the policies, uploads the findings to code scanning (SARIF) and writes a summary with sequence
  diagrams of each trace.

## When the gate fails

Read the trace: it is one schedule that breaks the rule, replayed by a simulator. `fxverify explain
FX-…` gives the rule, why it matters and a fixed example. Then either fix the policy, or accept the
finding on its line, with a reason that reviewers can judge:

```
edge offload: move kv -> host by gpu0.copy_done  # fx: allow FX-ORD-002 reason "drained by step()"
```

A suppression without a reason is an error, and one that matches nothing is a warning.

To adopt fxverify on a repository that already has findings, record them once with
`fxverify check . --write-baseline fxverify-baseline.json`, commit the file and pass
`--baseline fxverify-baseline.json` (or the action's `baseline` input): only new findings fail.
`--update-baseline` drops entries whose findings are gone.

Results are cached in your user cache folder: re-checking unchanged policies solves nothing.
"""


def files(action: str | None = None) -> dict[str, str]:
    """The scaffold: relative path -> text (``workflow(action)`` for the workflow)."""
    return {
        "policies/example.fx": EXAMPLE_POLICY,
        ".pre-commit-config.yaml": PRE_COMMIT_CONFIG,
        ".github/workflows/fxverify.yml": workflow(action),
        "README.md": README,
    }


def scaffold(target: str, action: str | None = None, force: bool = False) -> tuple[list[str], list[str], list[Diagnostic]]:
    """Write the scaffold into ``target`` (created if missing). Returns the paths written and the
    paths kept (a ``KEPT`` file already there, never replaced), both sorted, and the diagnostics:
    FX-IO-002 when another file of the scaffold already exists and ``force`` is not set (nothing is
    written then), FX-IO-001 when the folder cannot be written."""
    plan = files(action)
    root = Path(target)
    kept = sorted(p for p in plan if p in KEPT and (root / p).exists())
    existing = sorted(p for p in plan if p not in KEPT and (root / p).exists())
    if existing and not force:
        return [], [], [diagnostic(codes.IO_002, f"`{target}` already has {', '.join(f'`{p}`' for p in existing)}; "
                                   "nothing was written", help="pass `--force` to replace them, or scaffold into a new folder")]
    write = {p: t for p, t in plan.items() if p not in kept}
    try:
        for rel, text in sorted(write.items()):
            path = root / rel
            os.makedirs(path.parent, exist_ok=True)
            replace_atomically(str(path), text.encode("utf-8"))
    except OSError as err:
        return [], [], [diagnostic(codes.IO_001, f"cannot write into `{target}`: {err.strerror or err}",
                                   help="name a folder you can write")]
    return sorted(str(root / p) for p in write), sorted(str(root / p) for p in kept), []
