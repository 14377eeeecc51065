"""``fxverify init DIR``: scaffold a policy repository gated by fxverify.

Takes a target folder and the reference of the fxverify GitHub Action; produces the files of a
new policy repository: an example policy that fxverify proves, a pre-commit configuration whose
hook runs ``fxverify check``, a GitHub Actions workflow that uses the fxverify action (SARIF upload
and a Markdown job summary), and a README that explains the gate. Existing files are never
overwritten. Emits FX-IO-002 (files already there: nothing is written) and FX-IO-001 (the folder
cannot be written).
"""

from __future__ import annotations

import os
from pathlib import Path

from fxverify import __version__
from fxverify.atomic import replace_atomically
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic

#: The fxverify action, as ``owner/repository@ref``; ``fxverify init --action`` points elsewhere
#: (a fork or an internal mirror).
DEFAULT_ACTION = f"fxverify/fxverify@v{__version__}"

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
# pre-commit runs fxverify on every commit that touches a policy (install: `pre-commit install`).
# The hook uses the fxverify installed in your environment (`pip install fxverify`).
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


def workflow(action: str) -> str:
    """The GitHub Actions workflow that gates pull requests with the fxverify action ``action``."""
    return f"""\
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
    steps:
      - uses: actions/checkout@v4
      - uses: {action}
        with:
          paths: .
          # baseline: fxverify-baseline.json
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
- on your machine: `pip install fxverify`, then `fxverify check .`;
- before each commit: `pre-commit install` (see `.pre-commit-config.yaml`);
- on each pull request: `.github/workflows/fxverify.yml` runs the fxverify action, which uploads
  the findings to code scanning (SARIF) and writes a summary with sequence diagrams of each trace.

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


def files(action: str = DEFAULT_ACTION) -> dict[str, str]:
    """The scaffold: relative path -> text."""
    return {
        "policies/example.fx": EXAMPLE_POLICY,
        ".pre-commit-config.yaml": PRE_COMMIT_CONFIG,
        ".github/workflows/fxverify.yml": workflow(action),
        "README.md": README,
    }


def scaffold(target: str, action: str = DEFAULT_ACTION) -> tuple[list[str], list[Diagnostic]]:
    """Write the scaffold into ``target`` (created if missing). Returns the paths written, sorted,
    and the diagnostics: FX-IO-002 when any file already exists (nothing is written then), FX-IO-001
    when the folder cannot be written."""
    plan = files(action)
    root = Path(target)
    existing = sorted(p for p in plan if (root / p).exists())
    if existing:
        return [], [diagnostic(codes.IO_002, f"`{target}` already has {', '.join(f'`{p}`' for p in existing)}; "
                               "nothing was written", help="scaffold into a new folder")]
    try:
        for rel, text in sorted(plan.items()):
            path = root / rel
            os.makedirs(path.parent, exist_ok=True)
            replace_atomically(str(path), text.encode("utf-8"))
    except OSError as err:
        return [], [diagnostic(codes.IO_001, f"cannot write into `{target}`: {err.strerror or err}",
                               help="name a folder you can write")]
    return sorted(str(root / p) for p in plan), []
