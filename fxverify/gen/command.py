"""``fxverify gen prefill`` as one typed request: read the inputs, generate, write the outputs.

Takes a ``PrefillRequest`` (the input files, ``prefill.PrefillOptions`` without the echoed
command, and the output paths); returns a ``PrefillOutcome`` with the policy text (when it goes to
standard output), the diagnostics and the exit code. The outputs are checked together before
anything is written, and written atomically, so a failed run never leaves one file of the pair
behind. Emits the importers' FX-GEN-001/002, the generator's FX-GEN-003/004, FX-GEN-004 when
``-o`` and ``--summary-json`` name one file, FX-IO-002 (before reading anything) when an output
is one of the input files, and FX-IO-001 for an output that cannot be written.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field, replace

from fxverify.atomic import write_text
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.diagnostics.outdir import unwritable_file
from fxverify.gen.cxl_list import load_cxl, split_host
from fxverify.gen.hf_config import load_model
from fxverify.gen.nccl_topo import load_topology
from fxverify.gen.prefill import PrefillOptions, generate_prefill
from fxverify.source import SourceMap


@dataclass(frozen=True)
class PrefillRequest:
    """What ``fxverify gen prefill`` was asked: the model config, topology and CXL listings (paths),
    the generator ``options`` (their ``name`` defaults to the output file's stem), and where the
    policy (``output``; ``None``: standard output) and the summary JSON go."""

    model: str
    topology: str | None = None
    cxl: tuple[str, ...] = ()
    options: PrefillOptions = PrefillOptions()
    output: str | None = None
    summary_json: str | None = None


@dataclass
class PrefillOutcome:
    """The outcome: ``stdout`` (the policy text when no ``output`` was named), ``diagnostics`` with
    the ``sources`` their spans point into, and the ``exit_code`` (0, or 2 for any problem)."""

    stdout: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: SourceMap = field(default_factory=SourceMap)
    exit_code: int = 0


def command_line(req: PrefillRequest, name: str | None) -> str:
    """The command echoed in the policy's header: every option that changes the text, in a fixed
    order, so the echo reproduces the text wherever it is written."""
    o = req.options
    argv = ["fxverify", "gen", "prefill", "--model", req.model]
    argv += ["--topology", req.topology] if req.topology is not None else []
    for p in req.cxl:
        argv += ["--cxl", p]
    argv += ["--tokens", str(o.tokens), "--block-tokens", str(o.block_tokens), "--tp", str(o.tp), "--kv-dtype", o.kv_dtype]
    argv += (["--spill", o.spill] if o.spill is not None else []) + (["--disaggregate"] if o.disaggregate else [])
    argv += (["--unroll"] if o.unroll else []) + (["--layers", str(o.layers)] if o.layers is not None else [])
    argv += ["--hbm-gib", str(o.hbm_gib)] if o.hbm_gib != 80 else []
    argv += ["--ckpt-every", str(o.ckpt_every)] if o.ckpt_every is not None else []
    argv += ["--requests", str(o.requests)] if o.requests != 1 else []
    argv += ["--name", name] if name is not None else []
    return shlex.join(argv)


def run_prefill(req: PrefillRequest) -> PrefillOutcome:
    """Run the request (see the module docstring). Never raises for bad input or unwritable outputs."""
    out = PrefillOutcome()
    problem = _output_is_an_input(req) or _check_outputs(req)
    if problem is not None:  # before reading anything: a typo in an output never costs a run
        return _fail(out, [problem])
    spec, diags = load_model(req.model, out.sources)
    topo = fab = None
    if not diags and req.topology is not None:
        topo, diags = load_topology(req.topology, out.sources)
    if not diags and req.cxl:
        fab, diags = load_cxl(list(req.cxl), out.sources)
    gen = None
    if not diags:
        stem = os.path.basename(req.output).removesuffix(".fx").strip() if req.output is not None else ""
        # a --name given is checked as given; the output's stem is a default, dropped when blank
        name = req.options.name if req.options.name is not None else (stem or None)
        opts = replace(req.options, name=name, command=command_line(req, name))
        gen, diags = generate_prefill(spec, topo, fab, opts)  # type: ignore[arg-type]  # INVARIANT: loaded without diagnostics
    if diags or gen is None:
        return _fail(out, diags)
    try:
        if req.output is not None:
            write_text(req.output, gen.text)
        else:
            out.stdout = gen.text
        if req.summary_json is not None:
            write_text(req.summary_json, json.dumps(gen.summary, indent=2, sort_keys=True) + "\n")
    except OSError as err:
        return _fail(out, [diagnostic(codes.IO_001, f"cannot write `{err.filename or req.output}`: {err.strerror or err}",
                                      help="name a file in an existing, writable folder")])
    return out


def _output_is_an_input(req: PrefillRequest) -> Diagnostic | None:
    """FX-IO-002 when ``-o`` or ``--summary-json`` is one of the files the command reads: writing
    it would replace the input (a command never replaces files it did not write). Compared by file
    identity (``os.path.samefile``: links and other spellings of one path are one file); an output
    that does not exist yet cannot be an input."""
    inputs = [("--model", req.model)] + ([("--topology", req.topology)] if req.topology is not None else [])
    inputs += [("--cxl", split_host(arg)[1]) for arg in req.cxl]
    for option, target in (("-o", req.output), ("--summary-json", req.summary_json)):
        if target is None or not os.path.exists(target):
            continue
        for flag, path in inputs:
            try:
                same = os.path.samefile(target, path)
            except OSError:  # the input is missing or unreadable: its loader reports it
                same = False
            if same:
                return diagnostic(codes.IO_002, f"`{option} {target}` is the file `{flag}` reads; nothing was written",
                                  help=f"name a new file, such as `{option} "
                                       f"{'prefill.fx' if option == '-o' else 'prefill-summary.json'}`")
    return None


def _check_outputs(req: PrefillRequest) -> Diagnostic | None:
    """Both outputs are checked before either is written: never leave one file of the pair behind."""
    if req.output is not None and req.summary_json is not None and \
            os.path.abspath(req.output) == os.path.abspath(req.summary_json):
        return diagnostic(codes.GEN_004, f"-o and --summary-json both name `{req.output}`", help="give them different files")
    return next((p for p in map(unwritable_file, filter(None, (req.output, req.summary_json))) if p is not None), None)


def _fail(out: PrefillOutcome, diags: list[Diagnostic]) -> PrefillOutcome:
    out.diagnostics, out.exit_code = diags, 2
    return out
