"""The report of a ``Certifier`` recorded in a check's result (``certified``): a fast proof whose
certificate is rejected is no longer proved. Emits FX-INT-001 for each rejection; raises nothing.
"""

from __future__ import annotations

from dataclasses import replace

from fxverify.certify import Certifier
from fxverify.diagnostics.model import internal_error
from fxverify.ir import Policy
from fxverify.obligations.base import Obligation
from fxverify.result import CheckResult, Verdict


def certified(policy: Policy, by_key: dict[str, Obligation], certifier: Certifier, result: CheckResult) -> None:
    """Close ``certifier`` and record its report in ``result``: each rejected certificate makes
    its obligation (``by_key``: the fast-proved obligations, by key) unknown (it is no longer
    proved) with an FX-INT-001 naming the key and what failed, never a silent pass."""
    report = certifier.close()
    result.certified, result.certify_rejected = report.checked, len(report.failures)
    if not report.failures:
        return
    failed = {x.key: x.reason for x in report.failures}
    result.outcomes = [replace(o, verdict=Verdict.UNKNOWN, reason=f"certificate rejected: {failed[o.key]}")
                       if o.key in failed else o for o in result.outcomes]
    for x in report.failures:
        ob = by_key[x.key]
        result.diagnostics.append(internal_error(
            f"the certificate of the fast proof of {ob.key} was rejected ({report.mode} check): {x.reason}",
            ob.primary, notes=(f"proof method `{next(o.method for o in result.outcomes if o.key == x.key)}`",),
            policy=policy.name, obligation=ob.key))
