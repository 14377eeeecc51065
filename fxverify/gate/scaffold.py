"""``fxverify init DIR``: scaffold a policy repository gated by fxverify.

Takes a target folder, the pip requirement that installs fxverify and, optionally, the reference
of an fxverify GitHub Action; produces the files of a policy repository: an example policy that
fxverify proves, a pre-commit configuration with a local hook that installs fxverify itself
(``language: python``) and runs ``fxverify check`` on the staged policies, a GitHub Actions
workflow (one check writing annotations, SARIF for code scanning and a Markdown job summary, with
its result cache kept between runs and third-party actions pinned by commit) and a README that
explains the gate.

fxverify is not published on a package index, so the scaffold names it by its git repository at
the exact commit that runs ``init`` (``origin.origin()``: ``fxverify @ git+URL@COMMIT``), or by
the requirement given with ``--package``. When neither is known the requirement is a placeholder
that the workflow refuses with a message until it is filled in. Files already there are kept and
listed (a repository being adopted has its own README, and often its own pre-commit
configuration), unless ``force`` replaces them; a README is always kept. Emits FX-IO-001 (the
folder cannot be written).
"""

from __future__ import annotations

import os
from pathlib import Path

from fxverify.atomic import replace_atomically
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.origin import origin

#: What to write where the user must name the fxverify package (fxverify is on no package index).
PACKAGE_PLACEHOLDER = "FILL-IN: path or git URL of the fxverify repository"

#: Third-party actions of the workflow, pinned by commit: ``name -> (commit, tag it was read from)``.
#: A tag can be moved, a commit cannot (GitHub docs, "Security hardening for GitHub Actions":
#: pin actions to a full-length commit SHA).
PINNED = {
    "actions/checkout": ("d23441a48e516b6c34aea4fa41551a30e30af803", "v6.1.0"),
    "actions/setup-python": ("ece7cb06caefa5fff74198d8649806c4678c61a1", "v6.3.0"),
    "actions/cache": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "github/codeql-action/upload-sarif": ("8aad20d150bbac5944a9f9d289da16a4b0d87c1e", "v4.36.2"),
}


def uses(action: str) -> str:
    """``action@COMMIT  # TAG``: a pinned ``uses:`` value with the tag as a comment."""
    commit, tag = PINNED[action]
    return f"{action}@{commit}  # {tag}"


def package() -> str | None:
    """The pip requirement that installs the fxverify running now: its git repository at its
    commit (``fxverify @ git+https://host/owner/repo.git@COMMIT``), or ``None`` when unknown."""
    return origin().pip_url()

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

def pre_commit_config(spec: str) -> str:
    """The pre-commit configuration: a local hook that pre-commit installs with fxverify itself
    (``language: python``, fxverify from ``spec``), run on the staged policies."""
    return f"""\
# pre-commit runs fxverify on every commit that stages a policy (install: `pre-commit install`).
# pre-commit passes the staged *.fx files, so an `exclude:` here applies; a staged fabric fragment
# re-checks the policies that include it. pre-commit installs fxverify for the hook itself, from
# the requirement below (fxverify is not on PyPI: it comes from its git repository, at a commit).
repos:
  - repo: local
    hooks:
      - id: fxverify
        name: fxverify check
        entry: {HOOK_ENTRY}
        language: python
        additional_dependencies: ["{spec}"]
        files: \\.fx$
        pass_filenames: true
        require_serial: true
"""


def workflow(spec: str, action: str | None = None) -> str:
    """The GitHub Actions workflow that gates pull requests: with ``action`` (``owner/repo@ref``)
    it uses that fxverify action; without, it installs fxverify from ``spec`` (``FXVERIFY_PACKAGE``;
    a placeholder fails the job with a message saying so), restores the result cache, runs one
    check that writes annotations, SARIF and the job summary, and uploads the SARIF. Third-party
    actions are pinned by commit (``PINNED``)."""
    head = f"""\
name: fxverify

on:
  pull_request:
  push:
    branches: [main]

permissions: {{}}

# A newer push to the same branch or pull request cancels the check of the older one.
concurrency:
  group: fxverify-${{{{ github.workflow }}}}-${{{{ github.ref }}}}
  cancel-in-progress: true

jobs:
  check:
    name: fxverify check
    runs-on: ubuntu-latest
    permissions:
      contents: read
      security-events: write  # upload SARIF to code scanning
"""
    if action is not None:
        return head + f"""\
    steps:
      - uses: {uses("actions/checkout")}
        with:
          persist-credentials: false
      - uses: {action}
        with:
          paths: .
          # baseline: fxverify-baseline.json
"""
    value = "" if spec == PACKAGE_PLACEHOLDER else spec
    return head + f"""\
    env:
      # fxverify is not on PyPI: pip installs it from its git repository at a fixed commit.
      FXVERIFY_PACKAGE: "{value}"{"  # " + PACKAGE_PLACEHOLDER if not value else ""}
      FXVERIFY_CACHE_DIR: ${{{{ github.workspace }}}}/.fxverify-cache
    steps:
      - uses: {uses("actions/checkout")}
        with:
          persist-credentials: false
      - uses: {uses("actions/setup-python")}
        with:
          python-version: "3.12"
      - name: Install fxverify
        run: |
          if [ -z "$FXVERIFY_PACKAGE" ]; then
            echo "::error file=.github/workflows/fxverify.yml::set FXVERIFY_PACKAGE to the path or git URL of fxverify"
            exit 1
          fi
          python -m pip install --quiet "$FXVERIFY_PACKAGE"
      - name: Restore the result cache
        uses: {uses("actions/cache")}
        with:
          path: .fxverify-cache
          key: fxverify-${{{{ runner.os }}}}-${{{{ github.run_id }}}}-${{{{ github.run_attempt }}}}
          restore-keys: fxverify-${{{{ runner.os }}}}-
      - name: Check policies
        run: |
          # One check writes every output: annotations, SARIF and the job summary.
          # Add --baseline fxverify-baseline.json to fail only on new findings.
          fxverify check . --quiet --format github \\
            --format sarif=fxverify.sarif --format "markdown=$GITHUB_STEP_SUMMARY"
      - name: Upload SARIF
        if: ${{{{ always() && hashFiles('fxverify.sarif') != '' }}}}
        uses: {uses("github/codeql-action/upload-sarif")}
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
- on your machine: install fxverify from its git repository, at the commit the workflow names
  (`pip install "$FXVERIFY_PACKAGE"` with the value of `FXVERIFY_PACKAGE` in
  `.github/workflows/fxverify.yml`; fxverify is not on PyPI), then `fxverify check .`;
- before each commit: `pre-commit install` (see `.pre-commit-config.yaml`; pre-commit installs
  fxverify for the hook by itself);
- on each pull request: `.github/workflows/fxverify.yml` checks the policies once, annotates the
  findings, uploads them to code scanning (SARIF) and writes a summary with sequence diagrams of
  each trace; its result cache is kept between runs.

Settings shared by all three go in `[tool.fxverify]` of `pyproject.toml` or in `.fxverify.toml`
(for example `exclude = ["scratch"]`, `ignore = ["FX-MAP-101"]`).

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


def files(spec: str, action: str | None = None) -> dict[str, str]:
    """The scaffold: relative path -> text, with fxverify installed from ``spec``."""
    return {
        "policies/example.fx": EXAMPLE_POLICY,
        ".pre-commit-config.yaml": pre_commit_config(spec),
        ".github/workflows/fxverify.yml": workflow(spec, action),
        "README.md": README,
    }


def scaffold(target: str, action: str | None = None, force: bool = False,
             spec: str | None = None) -> tuple[list[str], list[str], list[Diagnostic]]:
    """Write the scaffold into ``target`` (created if missing), fxverify installed from ``spec``
    (default ``package()``, else ``PACKAGE_PLACEHOLDER``). Returns the paths written and the paths
    kept (already there: never replaced without ``force``, a README never), both sorted, and the
    diagnostics: FX-IO-001 when the folder cannot be written."""
    plan = files(spec or package() or PACKAGE_PLACEHOLDER, action)
    root = Path(target)
    kept = sorted(p for p in plan if (root / p).exists() and (p in KEPT or not force))
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
