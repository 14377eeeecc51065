"""Pictures of a policy: the fabric, the movement graph and the happens-before graph.

Takes a resolved ``ir.Policy`` (its ``graph.PolicyGraph``), optionally a finding to highlight
(``focus``) and the families to show instance by instance; produces ``model.Picture`` values, the
plain data (nodes, arrows, clusters, what is highlighted) that ``render.dot`` writes as DOT and
Graphviz lays out. Edge and region families are folded into one node each, with their index
ranges (``families``), so that a real policy of tens of thousands of edges stays readable.
``command`` is the driver of ``fxverify graph``. Emits FX-USE-005 for a ``--finding`` or
``--unfold`` that names nothing in the policy.
"""
