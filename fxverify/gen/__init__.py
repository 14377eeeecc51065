"""Generators of real policies from real input files (BRIEF section 6, ``fxverify gen``).

The stages of ``fxverify gen prefill``, each a module:
- import: ``hf_config`` (Hugging Face model configs), ``nccl_topo`` (NCCL topology XML) and
  ``cxl_list`` (``cxl list`` JSON) read their files, through ``input_file``, into plain
  dataclasses; bad input is a diagnostic with a span in the input file (FX-GEN-001/002);
- plan: ``prefill_plan`` (sizes, HBM, CXL, host and remote layout) with ``prefill_fabric``
  (devices, links, ranks, NICs) decides everything, or stops at the first thing that does not fit
  or an option that is wrong (FX-GEN-003/004);
- render: ``prefill_render`` writes the plan as ``.fx`` text and a summary, with the flow built by
  ``prefill_flow`` as an ``emit`` program;
- ``prefill`` is the entry point of plan and render, ``command`` the whole command (read the
  inputs, generate, write the outputs).

Every stage returns its result plus diagnostics; ``InputProblem`` carries a diagnostic only from
deep inside a stage to its entry point, and bad input never becomes a traceback.
"""

#: Dtypes the spilled KV cache may have (``--kv-dtype``): fp8 with per-group fp32 scales, or 16-bit.
#: Defined with the package, which imports nothing else, so the command line offers them cheaply.
KV_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8")
