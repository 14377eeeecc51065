"""Runs the lowering stages for ``fxverify lower``: check -> plan -> facts -> C -> clang -> object
facts -> skeletons -> write -> (kernel verify) -> (kernel run).

Takes a policy path and ``LowerOptions``; returns a ``LowerResult`` with the diagnostics, the
verification rows and the run report. The new output is built, and verified or run in the kernel
when asked, in a temporary sibling of the output directory, which replaces the output directory
only when every stage passed: a lowering that fails at any stage leaves the previous output as it
was and no temporary directory behind. Codes emitted: FX-BPF-001 (not proved), FX-BPF-002/003
(from ``plan``), FX-BPF-011 (a map the target cannot create, before compiling), FX-BPF-004 (verifier rejection),
FX-BPF-005 (clang or ``bpftool gen skeleton`` failure), FX-BPF-006 (kernel/simulator disagreement),
FX-BPF-007 (lowering fact not proved, among them a bpftime object that calls a helper or uses a
section bpftime does not implement), FX-BPF-008 (toolchain unavailable), FX-BPF-009 (warning:
lowered without a proof, under ``--allow-unproved``), FX-BPF-010 (warning: no clang, C only; or
no bpftool, no skeleton loader), FX-IO-001 (the output folder cannot be written), FX-USE-002
(``--kernel-*`` with the bpftime target, ``--cuda-kernel`` with another), FX-USE-005 (a
``--cuda-kernel`` that names no GPU hook); plus every input and obligation code of ``check``, and
its FX-INT-001.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from fxverify import atomic
from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Code
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.diagnostics.outdir import cannot_write, refuse_replacing
from fxverify.ir import Policy
from fxverify.lower import artifacts, libbpf, loader
from fxverify.lower.differential import RunReport, run_proved, run_refuted
from fxverify.lower.elf import bpftime_problems
from fxverify.lower.emit_c import CFile, emit_device
from fxverify.lower.facts import Fact, discharge_facts
from fxverify.lower.kernel import ProgramReport, verify_dir
from fxverify.lower.map_limits import plan_map_problems
from fxverify.lower.plan import Plan, build_plan
from fxverify.lower.targets import bpftime_support, is_cuda_symbol
from fxverify.vocab import DeviceKind
from fxverify.pipeline import CheckOptions, check, solver_problem
from fxverify.result import Verdict
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend
from fxverify.source import NO_SPAN, SourceMap


@dataclass(frozen=True)
class LowerOptions:
    """Options of ``fxverify lower``: ``target``; ``compile`` with clang; ``kernel_verify`` and
    ``kernel_run`` (kernel and dputime targets); ``allow_unproved`` lowers a refuted or unknown
    policy and stamps it; ``cuda_kernels`` (bpftime) binds GPU hooks to CUDA kernels, as
    ``(device, hook, kernel symbol)``; ``solver`` limits for the policy check and the lowering
    facts (``specs/lowering.md`` section 1)."""

    target: str = "kernel"
    cuda_kernels: tuple[tuple[str, str, str], ...] = ()
    compile: bool = True
    kernel_verify: bool = False
    kernel_run: bool = False
    allow_unproved: bool = False
    solver: SolverOptions = SolverOptions()


@dataclass
class LowerResult:
    """What one lowering did. ``exit_code`` follows BRIEF section 6 (0 ok, 1 refused/rejected/
    disagreement, 2 input or environment error). ``seconds`` holds wall times per stage, in
    seconds; ``written`` says whether the output directory was written."""

    path: str
    sources: SourceMap
    policy: Policy | None = None
    plan: Plan | None = None
    proved: bool = False
    diagnostics: list[Diagnostic] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    programs: list[ProgramReport] = field(default_factory=list)
    run: RunReport | None = None
    written: bool = False
    loader: bool = False
    exit_code: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def _diag(code: Code, msg: str, policy: Policy | None, help: str, notes: tuple[str, ...] = ()) -> Diagnostic:
    """A lowering diagnostic at the policy's declaration."""
    span = policy.span if policy is not None else NO_SPAN
    return diagnostic(code, msg, span if span != NO_SPAN else None, "policy", notes=notes, help=help)


def _refuse_replacing(out_dir: str) -> Diagnostic | None:
    """FX-IO-002 when writing ``out_dir`` would delete something a lowering did not write: the
    output folder is replaced as a whole, so it must be new, empty, or a previous lowering's
    output (``artifacts.foreign_entries``), and must not hold the current folder. FX-IO-001 when
    it is not a folder or cannot be listed (``diagnostics.outdir``)."""
    return refuse_replacing(out_dir, artifacts.foreign_entries, "a lowering", "fxverify lower", "lowered")


def lower(path: str, out_dir: str, opts: LowerOptions) -> LowerResult:
    """Lower the policy at ``path`` into ``out_dir``. Never raises for user input: a missing libbpf
    or ``bpf()`` permission is FX-BPF-008 (exit 2), an output folder that cannot be written
    FX-IO-001 (exit 2), and a check that broke an invariant keeps its FX-INT-001 (exit 3). Other
    exceptions are bugs (FX-INT-001 in the command line)."""
    refusal = solver_problem(opts.solver) or _refuse_replacing(out_dir)
    if refusal is not None:
        return LowerResult(path, SourceMap(), diagnostics=[refusal], exit_code=2)
    t0 = time.perf_counter()
    res = check(path, CheckOptions(solver=opts.solver, verify_hints=False))  # lowering shows no hints
    out = LowerResult(path, res.sources, res.policy, diagnostics=[])
    out.seconds["check"] = time.perf_counter() - t0
    if res.internal_error:
        out.diagnostics = res.diagnostics
        out.exit_code = 3
        return out
    if res.policy is None:
        out.diagnostics = res.diagnostics
        out.exit_code = 2
        return out
    pol = res.policy
    out.proved = res.verdict is Verdict.PROVED
    if not out.proved:
        failing = Counter(d.code for d in res.diagnostics if d.is_error)
        listed = ", ".join(f"{c} ({n})" for c, n in sorted(failing.items()))
        if not opts.allow_unproved:
            out.diagnostics.append(_diag(codes.BPF_001, f"refusing to lower `{pol.name}`: it is not proved ({listed})",
                                         pol, "fix what `fxverify check` reports; `--allow-unproved` is for "
                                         "tests and experiments only"))
            out.exit_code = 1
            return out
        out.diagnostics.append(_diag(codes.BPF_009, f"lowering `{pol.name}` although it is not proved ({listed}); "
                                     "every artifact is stamped UNPROVED", pol, "never deploy these programs"))
    if opts.target == "bpftime" and (opts.kernel_verify or opts.kernel_run):
        out.diagnostics.append(_diag(codes.USE_002, "--kernel-verify and --kernel-run load programs into Linux; the "
                                     "bpftime target's programs run in bpftime (its GPU maps and CUDA probes are not "
                                     "the kernel's)", pol, "use `--target kernel` or `--target dputime`"))
        out.exit_code = 2
        return out
    kernels, bad = _cuda_kernels(pol, opts)
    if bad is not None:
        out.diagnostics.append(bad)
        out.exit_code = 2
        return out
    t1 = time.perf_counter()
    plan, diags = build_plan(pol, opts.target, out.proved, kernels)
    out.diagnostics += diags
    if plan is None:
        out.exit_code = 1
        return out
    out.plan = plan
    too_big = plan_map_problems(plan)
    if too_big:  # before any fact, compilation or load: the kernel would refuse these maps
        out.diagnostics += too_big
        out.exit_code = 2
        return out
    solver = open_backend(opts.solver)
    try:
        out.facts = discharge_facts(plan, solver)
    finally:
        solver.close()
    for f in out.facts:
        if f.status != "proved":
            out.diagnostics.append(_diag(codes.BPF_007, f"lowering fact `{f.key}` is {f.status}: {f.what}", pol, f.detail))
    if any(d.is_error for d in out.diagnostics):
        out.exit_code = 1
        return out
    cfiles = [emit_device(plan, stem, res.sources) for stem in plan.stems()]
    out.seconds["lower"] = time.perf_counter() - t1
    objects: dict[str, bytes] = {}
    clang_ver = None
    want_objects = opts.compile or opts.kernel_verify or opts.kernel_run
    if want_objects:
        if artifacts.clang_path() is None:
            if opts.kernel_verify or opts.kernel_run:
                out.diagnostics.append(_diag(codes.BPF_008, "clang is not installed, so no object can be loaded", pol,
                                             "install clang (Debian/Ubuntu: `apt-get install clang`)"))
                out.exit_code = 2
                return out
            out.diagnostics.append(_diag(codes.BPF_010, "clang is not installed: only C sources were written", pol,
                                         "install clang, or pass --no-compile"))
        else:
            t2 = time.perf_counter()
            clang_ver = artifacts.clang_version()
            for c in cfiles:
                r = artifacts.compile_c(c)
                if not r.ok:
                    out.diagnostics.append(_diag(codes.BPF_005, f"clang failed on `{c.stem}.bpf.c`", pol,
                                                 "this is a bug in fxverify's C emitter; please report it",
                                                 notes=tuple(r.log.splitlines()[:20])))
                else:
                    objects[c.stem] = r.obj
            out.seconds["compile"] = time.perf_counter() - t2
    if objects and plan.target == "bpftime":
        _bpftime_facts(out, plan, cfiles, objects)
    skeletons = _skeletons(out, plan, objects) if objects and not any(d.is_error for d in out.diagnostics) else {}
    if any(d.is_error for d in out.diagnostics):
        out.exit_code = 1  # an incomplete lowering: the previous output stays as it was
        return out
    verdicts = Counter(v.verdict.value for v in res.outcomes)
    files = artifacts.render(plan, cfiles, out.facts, verdicts, res.sources, objects, clang_ver, skeletons)
    out.loader = "loader.c" in files
    try:
        staged = artifacts.stage_dir(out_dir, files)
    except OSError as err:
        return _unwritable(out, out_dir, err)
    try:
        # The new output is verified and run where it was staged; it replaces the previous one
        # only when every stage passed, so a failed lowering never leaves a half-replaced folder.
        _load_and_run(out, staged, opts, res.refutations)
        if out.exit_code == 0:
            try:
                atomic.swap_in(staged, out_dir)
            except OSError as err:
                return _unwritable(out, out_dir, err)
            out.written = True
    finally:
        if not out.written:
            atomic.discard(staged)
    return out


def _cuda_kernels(pol: Policy, opts: LowerOptions) -> tuple[dict[tuple[str, str], str], Diagnostic | None]:
    """``opts.cuda_kernels`` as ``(device, hook) -> kernel``, or the usage error (exit 2) that
    refuses them: FX-USE-002 on a target other than bpftime, FX-USE-005 for a device that is not a
    GPU of the policy, a hook it does not declare, a hook named twice or a name that is not a C
    identifier (a mangled kernel name is)."""
    out: dict[tuple[str, str], str] = {}
    if opts.cuda_kernels and opts.target != "bpftime":
        return out, _diag(codes.USE_002, "--cuda-kernel binds a GPU hook to a CUDA kernel's probes, which only the "
                          "bpftime target has", pol, "add `--target bpftime`, or drop --cuda-kernel")
    names = {d.name: d for d in pol.devices}
    for dev, hook, symbol in opts.cuda_kernels:
        d = names.get(dev)
        why = ("is not a device of the policy" if d is None else "is not a GPU" if d.kind is not DeviceKind.GPU
               else f"has no hook `{hook}`" if hook not in d.hooks else "")
        if why or not is_cuda_symbol(symbol) or (dev, hook) in out:
            what = (f"`{dev}` {why}" if why else f"`{symbol}` is not a kernel name (a C identifier, as mangled names are)"
                    if not is_cuda_symbol(symbol) else f"`{dev}.{hook}` is bound twice")
            return out, _diag(codes.USE_005, f"--cuda-kernel {dev}.{hook}={symbol}: {what}", pol,
                              "write --cuda-kernel DEVICE.HOOK=KERNEL with a GPU hook the policy declares and the "
                              "kernel's (mangled) symbol, e.g. _Z9vectorAddPKfS0_Pf")
        out[(dev, hook)] = symbol
    return out, None


def _bpftime_facts(out: LowerResult, plan: Plan, cfiles: list[CFile], objects: dict[str, bytes]) -> None:
    """Add one lowering fact per bpftime object: every program section is one its side attaches
    and every helper its code calls is one its side implements (``elf.bpftime_problems`` against
    ``bpftime_support.json``; the host side for ``<device>``, the GPU side for ``<device>.cuda``).
    A violation is FX-BPF-007."""
    table = bpftime_support()["upstream"]
    for c in cfiles:
        if c.stem not in objects:
            continue  # clang failed on it (FX-BPF-005)
        side = "gpu" if c.stem.endswith(".cuda") else "host"
        problems = bpftime_problems(objects[c.stem], side)
        detail = (f"checked against bpftime {table['commit'][:12]} ({side} side)"
                  + (": " + "; ".join(problems[:5]) if problems else ""))
        fact = Fact(f"bpftime-support:{c.stem}", f"`{c.stem}.bpf.o` uses only sections and helpers bpftime's {side} side "
                    "implements", "refuted" if problems else "proved", "elf", detail)
        out.facts.append(fact)
        if problems:
            out.diagnostics.append(_diag(codes.BPF_007, f"lowering fact `{fact.key}` is refuted: {fact.what}", out.policy,
                                         "this is a bug in fxverify's bpftime target; please report it",
                                         notes=tuple(problems[:12])))


def _skeletons(out: LowerResult, plan: Plan, objects: dict[str, bytes]) -> dict[str, str]:
    """``bpftool gen skeleton`` of every object, stem -> header text; empty (with FX-BPF-010, a
    warning) when bpftool is not installed. A bpftool failure is FX-BPF-005."""
    if loader.bpftool_path() is None:
        out.diagnostics.append(_diag(codes.BPF_010, "bpftool is not installed: the objects were compiled, but no "
                                     "skeleton headers or loader were written", out.policy,
                                     "install bpftool (Debian/Ubuntu: `apt-get install bpftool`), or run `bpftool gen "
                                     "skeleton <stem>.bpf.o name fx_<stem>` yourself"))
        return {}
    t = time.perf_counter()
    skels = {}
    for stem, obj in objects.items():
        text, err = loader.gen_skeleton(stem, obj)
        if text is None:
            out.diagnostics.append(_diag(codes.BPF_005, f"bpftool gen skeleton failed on `{stem}.bpf.o`", out.policy,
                                         "this is a bug in fxverify's objects; please report it", notes=(err,)))
        else:
            skels[stem] = text
    out.seconds["skeleton"] = time.perf_counter() - t
    return skels


def _unwritable(out: LowerResult, out_dir: str, err: OSError) -> LowerResult:
    """FX-IO-001 (exit 2): ``out_dir`` cannot be written; it is as it was."""
    out.diagnostics.append(cannot_write(out_dir, err))
    out.exit_code = 2
    return out


def _load_and_run(out: LowerResult, staged: str, opts: LowerOptions, refutations: list) -> None:
    """``--kernel-verify`` and ``--kernel-run`` on the lowering staged in ``staged``: fills
    ``out.programs``, ``out.run``, the diagnostics (FX-BPF-004/006/008) and ``out.exit_code``."""
    pol = out.policy
    if not (opts.kernel_verify or opts.kernel_run):
        return
    why = libbpf.bpf_available()
    if why is not None:
        out.diagnostics.append(_diag(codes.BPF_008, f"cannot load programs: {why}", pol,
                                     "run as root (or with CAP_BPF) on a kernel with BPF enabled"))
        out.exit_code = 2
        return
    t3 = time.perf_counter()
    try:
        out.programs = verify_dir(staged)
    except libbpf.BpfUnavailable as err:
        out.diagnostics.append(_diag(codes.BPF_008, f"cannot load programs: {err}", pol,
                                     "install libbpf (Debian/Ubuntu: `apt-get install libbpf1`)"))
        out.exit_code = 2
        return
    out.seconds["kernel_verify"] = time.perf_counter() - t3
    for p in out.programs:
        if not p.accepted:
            out.diagnostics.append(_diag(codes.BPF_004, f"the Linux verifier rejected `{p.name}` ({p.device}.{p.hook})",
                                         pol, "the rewritten verifier log below points at the `.fx` spans involved",
                                         notes=tuple(p.fx_spans) + tuple(p.log.splitlines()[-12:])))
    if any(not p.accepted for p in out.programs):
        out.exit_code = 1
        return
    if opts.kernel_run:
        assert pol is not None  # INVARIANT: a plan exists only for a loaded policy
        t4 = time.perf_counter()
        rep = RunReport()
        if out.proved:
            run_proved(pol, staged, rep)
        else:
            run_refuted(pol, staged, refutations, rep)
        out.run = rep
        out.seconds["kernel_run"] = time.perf_counter() - t4
        if not rep.ok:
            out.diagnostics.append(_diag(codes.BPF_006, f"kernel and simulator disagree on `{pol.name}`", pol,
                                         "this is a bug in fxverify's lowering or simulator; please report it",
                                         notes=tuple(rep.mismatches[:12])))
            out.exit_code = 1
