"""Stable fingerprints of findings, for baselines and SARIF ``partialFingerprints``.

Takes a ``Diagnostic``; produces a hex string. A fingerprint depends on the code, the declared
policy name, the policy-relative names of the edges the finding blames (``Diagnostic.edges``: not
the flushes, handoffs or readers that only explain it) and the kind of witness (with the kind of
its violating event). It never
depends on line or column numbers, file paths, whitespace or witness values (times, addresses), so
it survives reformatting, moved lines and a different solver model for the same bug. Emits no
diagnostics.
"""

from __future__ import annotations

import hashlib

from fxverify.diagnostics.model import Diagnostic

#: Bumped when the recipe changes; it is part of the hashed text and of the SARIF key
#: ``partialFingerprints["fxverify/v1"]`` (SARIF 2.1.0 section 3.27.17: versioned names).
FINGERPRINT_VERSION = 1


def fingerprint(d: Diagnostic) -> str:
    """Return the 32-hex-digit fingerprint of ``d``.

    Findings of obligations hash ``(code, policy, edges, witness)``. Diagnostics that name no edge
    (input errors, unused suppressions) hash their code and message, which for those codes names
    the construct (for example the suppressed code) and carries no line number.
    """
    if d.edges or d.witness:
        parts = [d.code, d.policy, "|".join(d.edges), d.witness]
    else:
        parts = [d.code, d.policy, d.message]
    text = "\x1f".join([f"fxverify-fingerprint/{FINGERPRINT_VERSION}"] + parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
