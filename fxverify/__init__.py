"""fxverify: a verifier for data-movement policies on GPU-DPU/NIC-CXL fabrics.

The pipeline is parse -> resolve -> obligations -> discharge (Z3) -> replay (simulator) -> render.
See ``fxverify.pipeline`` for the orchestration and ``specs/`` for the user documentation.
"""

__version__ = "0.1.0"
