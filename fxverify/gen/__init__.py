"""Generators of real policies from real input files (BRIEF section 6, ``fxverify gen``).

Importers read Hugging Face model configs (``hf_config``), NCCL topology XML (``nccl_topo``) and
``cxl list`` JSON (``cxl_list``) into plain dataclasses; ``prefill`` plans a prefill job on that
fabric and renders it as ``.fx`` text. Every importer returns its result plus diagnostics; bad
input is a diagnostic with a span in the input file (FX-GEN-…), never an exception.
"""
