"""eBPF lowering of proved policies (BRIEF section 7, ``specs/lowering.md``).

Takes a policy path and ``driver.LowerOptions``; produces a lowering directory (the files of
``specs/lowering.md`` section 5) and a ``driver.LowerResult`` that ``fxverify.render.lower`` renders.
Stages, in
pipeline order:
- ``targets``: target profiles (consistency class -> map type, hook -> programs and their attach
  contracts, decision -> action) for ``kernel``, ``bpftime`` and ``dputime``; what bpftime
  implements is ``bpftime_support.json``, read from its sources;
- ``plan``: a proved ``ir.Policy`` -> a ``Plan``: edge descriptors, runtime-guard operations and
  initial map contents (data-driven: one program per hook, never one per edge), with the
  cross-edge watches of ``watches``;
- ``facts``: the lowering's own obligations (key ranges, loop bounds, counter balance), discharged
  with the Z3 backend;
- ``emit_c``: libbpf-style restricted C per object, with a source map back to ``.fx`` spans; the
  fixed runtime C it splices in is package data in ``c/`` (``c/README.md``);
- ``artifacts``: every file of the output directory, written atomically, plus clang compilation;
- ``elf``: the program sections and helper calls of a compiled object (the bpftime check);
- ``loader``: the libbpf skeletons (``bpftool gen skeleton``) and the generated loader;
- ``libbpf``/``kernel``: loading into the Linux verifier and BPF_PROG_TEST_RUN;
- ``differential``: kernel decisions compared with the concrete simulator;
- ``driver`` runs the stages for ``fxverify lower``.

``TARGETS`` names the runtimes (the package itself imports nothing else, so the command line can
offer them without loading the lowering).

Codes emitted by this package: FX-BPF-001 .. FX-BPF-011, FX-USE-002 and FX-USE-005 (all from ``driver``,
FX-BPF-002/003 planned by ``plan``).
"""

#: The runtimes a policy can be lowered for (``specs/lowering.md`` section 2).
TARGETS: tuple[str, ...] = ("kernel", "bpftime", "dputime")
