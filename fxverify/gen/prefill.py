"""``fxverify gen prefill``: a prefill policy from a model config, a topology and CXL listings.

Takes a ``ModelSpec`` (``hf_config``), an optional ``Topology`` (``nccl_topo``), an optional
``CxlFabric`` (``cxl_list``) and ``PrefillOptions``; produces ``.fx`` text and a summary, or
diagnostics (FX-GEN-003 when something does not fit, FX-GEN-004 for bad options). Two stages:
``prefill_plan`` decides every size and placement (and every fit), ``prefill_render`` writes the
plan as text, with the flow built by ``prefill_flow``. The job it describes, per tensor-parallel
rank and layer (``specs/generators.md`` gives every formula):

- stream the layer's attention weights, write the layer's KV cache in blocks of ``block_tokens``
  tokens, attend over the layer's cache, all-reduce the attention output into the residual
  stream (reduce-scatter with ``reduce(sum)``, then an all-gather into a full copy of the hidden
  states, NCCL's ring decomposition);
- dense layers: stream FFN weights, up and down projections, all-reduce; MoE layers: scatter the
  tokens to the rank's experts (expert capacity ``tokens x top_k / experts``, GShard/Switch),
  stream each expert's weights from host memory into a double-buffered HBM slot, run the expert,
  gather the outputs back into token order with a ``reduce(sum)`` (shared experts run densely);
- spill the KV of the last ``spill`` fraction of layers into volatile CXL windows (quantized to
  fp8 with per-128 scales, then crc32c), checkpoint the hidden states lz4-compressed into pmem
  windows (crc32c, then persist), and with ``disaggregate`` send every KV block through the
  nearest NIC (or a DPU) over a posted RDMA link to a decode node, flushing per layer;
- return each layer's KV blocks to the pool once attention, the spill and the send are done;
- with ``requests`` > 1, run it all once per request, one after another on each GPU, through a
  pool of two KV slots per rank: request q allocates slot q % 2 after request q - 2 freed it.
"""

from __future__ import annotations

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.gen.cxl_list import CxlFabric
from fxverify.gen.emit import Loop, count
from fxverify.gen.hf_config import ModelSpec
from fxverify.gen.input_file import InputProblem
from fxverify.gen.nccl_topo import Topology
from fxverify.gen.prefill_flow import flow_program
from fxverify.gen.prefill_plan import PrefillOptions, PrefillPlan, plan_prefill
from fxverify.gen.prefill_render import Generated, final_owner_lines, render_prefill
from fxverify.resolve.limits import Limits

__all__ = ["Generated", "PrefillOptions", "generate_prefill"]


def generate_prefill(model: ModelSpec, topo: Topology | None, cxl: CxlFabric | None,
                     opts: PrefillOptions) -> tuple[Generated | None, list[Diagnostic]]:
    """Plan and render a prefill policy. Returns ``(generated, [])`` or ``(None, [diagnostic])``
    with FX-GEN-003 (HBM, CXL or address space too small, too few GPUs or no NIC, or more edge
    instances than ``fxverify check`` accepts: ``Limits.max_edges``, its FX-LIM-001) or
    FX-GEN-004 (an option out of range or in conflict). Never raises for bad input.
    Deterministic: same inputs, same text."""
    try:
        plan = plan_prefill(model, topo, cxl, opts)
    except InputProblem as p:
        return None, [p.diag]
    too_many = _too_many_edges(plan)
    if too_many is not None:
        return None, [too_many]
    return render_prefill(plan), []


def _too_many_edges(plan: PrefillPlan, cap: int = Limits().max_edges) -> Diagnostic | None:
    """FX-GEN-003 when the plan's flow unrolls to more than ``cap`` edge and final-owner
    instances, which ``fxverify check`` would refuse (FX-LIM-001: ``resolve.flows`` counts both):
    the policy is not written. Counted with a cap, so a million requests are refused at once, not
    after counting them all."""
    flow = flow_program(plan)
    budget = cap - final_owner_lines(plan)
    if count(flow, cap=budget) <= budget:
        return None
    requests, last = plan.sizes.requests, flow[-1]
    # the last request is in the steady state: its KV slot was returned by an earlier one
    per = count(last.body, {last.var: requests - 1}, cap=budget) if requests > 1 and isinstance(last, Loop) else 0
    if 0 < per <= budget:
        fit = f"each request unrolls to {per} edge instances, so at most {budget // per} requests fit"
        hint = f"lower --requests to at most {budget // per}"
    else:
        fit = "the flow has that many for one request"
        hint = "lower --layers or --tokens, or raise --block-tokens"
    return diagnostic(codes.GEN_003, f"the policy would unroll to more than {cap} edge and final-owner instances, "
                                     f"the most `fxverify check` accepts (FX-LIM-001); {fit}",
                      help=f"{hint}; nothing was written")
