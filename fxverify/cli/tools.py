"""The commands around checking: ``explain``, ``init``, ``lsp``, ``serve`` and ``gen prefill``.

Each reads its arguments, builds one request for its stage (``diagnostics.explain``,
``gate.scaffold``, ``lsp.server``, ``serve.command``, ``gen.command``) and renders what it returns;
``fxverify.cli`` registers them on the app. Codes: FX-USE-003 and FX-USE-004 (explain), FX-USE-005
(an empty ``--cxl``), and whatever the stage returns. Exit codes as BRIEF section 6.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from fxverify.cli.common import EMPTY_PATH, problems, stop
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import nearest
from fxverify.gen import KV_DTYPES
from fxverify.smt.backend import SolverOptions
from fxverify.vocab import SOLVER_PARAM_MAX


def explain(code: Optional[str] = typer.Argument(None, help="A code such as FX-ORD-002."),
            list_all: bool = typer.Option(False, "--list", metavar="", help="List every code.")) -> None:
    """Print the rule behind a diagnostic code, why it matters, and a failing and a fixed example."""
    from fxverify.diagnostics.explain import explain as text_of, list_codes, load_examples

    if list_all:
        sys.stdout.write(list_codes())
        raise typer.Exit(0)
    if code is None or not code.strip():
        # an empty code (an unset shell variable) would be the prefix of every family
        raise stop(codes.USE_004, ("an empty code was given: " if code is not None else "")
                   + "name a code, such as `fxverify explain FX-ORD-002`, or use `--list`",
                   "`fxverify explain --list` lists every code")
    c = codes.lookup(code.upper())
    family = list_codes(code.upper()) if c is None else ""
    if family:  # a family such as FX-ORD: its codes, each of which `explain` takes
        sys.stdout.write(family)
        raise typer.Exit(0)
    if c is None:
        # Compared without the `FX-` every code shares, which would make any two look alike; a
        # family (`FX-ORD`, which explain lists) is a candidate too.
        names = [k.removeprefix("FX-") for k in codes.REGISTRY]
        bare = nearest(code.upper().removeprefix("FX-"), names + sorted({n.rsplit("-", 1)[0] for n in names}))
        near = None if bare is None else f"FX-{bare}"
        raise stop(codes.USE_003, f"unknown code `{code}`" + (f"; did you mean `{near}`?" if near else ""),
                    "`fxverify explain --list` lists every code")
    sys.stdout.write(text_of(c, load_examples()))


def init(directory: Path = typer.Argument(..., help="The folder of the policy repository (new, or one to add the gate to)."),
         action: Optional[str] = typer.Option(None, "--action", help="Use this fxverify GitHub Action (owner/repo@ref) "
                                              "instead of installing fxverify in the workflow."),
         package: Optional[str] = typer.Option(None, "--package", metavar="REQUIREMENT",
                                               help="The pip requirement that installs fxverify in the hook and the "
                                                    "workflow (default: this fxverify's git repository at its commit)."),
         force: bool = typer.Option(False, "--force", metavar="", help="Replace scaffold files already there (a README is always kept).")) -> None:
    """Scaffold a policy repository, or add the gate to one: an example policy, a pre-commit hook, a CI workflow, a README."""
    from fxverify.gate.scaffold import PACKAGE_PLACEHOLDER, package as this_package, scaffold

    spec = package or this_package()
    written, kept, refused = scaffold(str(directory), action, force, spec)
    if refused:
        problems(refused)
        raise typer.Exit(2)
    for p in written:
        typer.echo(f"wrote {p}")
    for p in kept:
        why = "a README is never replaced" if p.endswith("README.md") else "`--force` replaces it"
        typer.echo(f"kept {p} (already there; {why})")
    if any(p.endswith(".pre-commit-config.yaml") for p in kept):
        typer.echo("  to gate commits, add the `fxverify` hook of `fxverify init NEW-FOLDER` to it")
    if spec is None:
        typer.echo(f"then: replace `{PACKAGE_PLACEHOLDER}` (the workflow's FXVERIFY_PACKAGE, the hook's "
                   "additional_dependencies) with `fxverify @ git+URL@COMMIT`, or run `fxverify init --package ...`")
    else:
        typer.echo(f"fxverify installs from: {spec}")
    typer.echo(f"next: cd {directory} && fxverify check .")


def lsp(
    stdio: bool = typer.Option(True, "--stdio", metavar="", help="Speak LSP on standard input and output (the only transport)."),
    check_seconds: float = typer.Option(120.0, "--check-seconds", min=1, help="Wall-time cap of one check, in s: past it the verdict is unknown."),
    memory_mib: int = typer.Option(4096, "--memory-mib", min=64, help="Address-space cap of one check's process, in MiB."),
    rlimit: int = typer.Option(SolverOptions.rlimit, "--rlimit", min=1, max=SOLVER_PARAM_MAX, help="Solver resource limit per query."),
    timeout: int = typer.Option(SolverOptions.timeout_ms, "--timeout", min=1, max=SOLVER_PARAM_MAX, help="Wall-clock limit per query, in ms."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir",
                                             help="Result cache folder whose families level the checks share (default: the user cache directory)."),
    no_cache: bool = typer.Option(False, "--no-cache", metavar="", help="Neither read nor write the result cache."),
) -> None:
    """Run the language server (diagnostics as you type, hover, definition, completion, verified fixes) over stdio."""
    from fxverify.gate.cache import default_cache_dir
    from fxverify.isolate import Caps
    from fxverify.lsp.server import serve_stdio
    from fxverify.pipeline import CheckOptions

    serve_stdio(CheckOptions(solver=SolverOptions(rlimit=rlimit, timeout_ms=timeout)),
                Caps(seconds=check_seconds, memory_bytes=memory_mib << 20),
                None if no_cache else str(cache_dir) if cache_dir else default_cache_dir())
    raise typer.Exit(0)


def serve(
    port: int = typer.Option(8642, "--port", min=0, max=65535, help="TCP port (0: any free port)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind: a loopback address unless --allow-remote."),
    allow_remote: bool = typer.Option(False, "--allow-remote", metavar="", help="Allow a --host that is not loopback (the page runs checks for anyone who reaches it)."),
    root: Optional[Path] = typer.Option(None, "--root", help="The repository whose corpus to teach (default: the one holding the current folder)."),
    check_seconds: float = typer.Option(20.0, "--check-seconds", min=1, help="Wall-time cap of one check, in s: past it the verdict is unknown."),
    memory_mib: int = typer.Option(2048, "--memory-mib", min=64, help="Address-space cap of one check's process, in MiB."),
    verbose: bool = typer.Option(False, "--verbose", metavar="", help="Log every request on standard error."),
) -> None:
    """Serve the teaching page on http://127.0.0.1:PORT: the corpus lessons, an editor, the real checker, explain."""
    from fxverify.isolate import Caps
    from fxverify.serve.command import ServeRequest, run_serve

    refused, code = run_serve(ServeRequest(host, port, allow_remote, None if root is None else str(root),
                                            Caps(seconds=check_seconds, memory_bytes=memory_mib << 20), verbose))
    problems(refused)
    raise typer.Exit(code)


#: Dtypes of the spilled KV cache (``--kv-dtype``), as the generator defines them.
KvDtype = Enum("KvDtype", {d: d for d in KV_DTYPES}, type=str)  # type: ignore[misc]


def gen_prefill(
    model: Path = typer.Option(..., "--model", help="Hugging Face config.json of the model."),
    topology: Optional[Path] = typer.Option(None, "--topology", help="NCCL topology XML (the NCCL_TOPO_FILE format)."),
    cxl: list[str] = typer.Option([], "--cxl", metavar="[HOST=]FILE", help="`cxl list` JSON, or HOST=FILE for another host's listing; repeat to merge "
                                  "listings (a window backed by a memdev serial two hosts list is shared: noncoherent)."),
    tokens: int = typer.Option(8192, "--tokens", help="Prompt tokens of the request."),
    block_tokens: int = typer.Option(16, "--block-tokens", help="Tokens per KV-cache block."),
    tp: int = typer.Option(1, "--tp", help="Tensor-parallel degree (GPUs)."),
    kv_dtype: KvDtype = typer.Option(KvDtype("fp8"), "--kv-dtype", help="Dtype of the KV spilled to CXL."),  # type: ignore[valid-type]
    spill: Optional[str] = typer.Option(None, "--spill", help="Fraction of layers whose KV spills to CXL (default: 0.25 with --cxl, else 0)."),
    disaggregate: bool = typer.Option(False, "--disaggregate", metavar="", help="Send the KV to a remote decode node through a NIC or DPU."),
    unroll: bool = typer.Option(False, "--unroll", metavar="", help="Emit concrete edges instead of edge families."),
    layers: Optional[int] = typer.Option(None, "--layers", help="Keep only the first N layers (quick checks)."),
    hbm_gib: int = typer.Option(80, "--hbm-gib", help="HBM per GPU in GiB (topology files do not record it)."),
    ckpt_every: Optional[int] = typer.Option(None, "--ckpt-every", help="Checkpoint the hidden states every N layers into pmem; 0 disables (default: 8, widened to fit)."),
    requests: int = typer.Option(1, "--requests", help="Prefill requests sharing one KV block pool per GPU (blocks freed and reused)."),
    name: Optional[str] = typer.Option(None, "--name", help="Policy name (default: the output file's stem)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the policy to FILE (atomically) instead of stdout."),
    summary_json: Optional[Path] = typer.Option(None, "--summary-json", help="Write a JSON summary of the sizes to FILE."),
) -> None:
    """Generate a prefill policy from a model config, and optionally a topology and CXL listings."""
    from fxverify.gen.command import PrefillRequest, run_prefill
    from fxverify.gen.prefill import PrefillOptions

    if any(not c for c in cxl):  # a string option (HOST=FILE), so not refused by its type
        raise stop(codes.USE_005, f"`--cxl`: {EMPTY_PATH}", "`fxverify gen prefill --help` lists the options")

    opts = PrefillOptions(tokens=tokens, block_tokens=block_tokens, tp=tp, kv_dtype=kv_dtype.value, spill=spill,
                          disaggregate=disaggregate, unroll=unroll, layers=layers, hbm_gib=hbm_gib,
                          ckpt_every=ckpt_every, name=name, requests=requests)
    req = PrefillRequest(str(model), None if topology is None else str(topology), tuple(str(p) for p in cxl), opts,
                         None if output is None else str(output), None if summary_json is None else str(summary_json))
    out = run_prefill(req)
    problems(out.diagnostics, out.sources)
    sys.stdout.write(out.stdout)
    raise typer.Exit(out.exit_code)
