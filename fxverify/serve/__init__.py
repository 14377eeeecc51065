"""``fxverify serve``: a local teaching page on the loopback interface.

The corpus lessons in teaching order (``lessons``), each with its text, its policy in an editor, a
Check button that runs the real checker on the edited text (``api``, through ``isolate``: a child
process under a wall-time and memory cap), the verdict, each finding with the swimlane of its
trace and its hint, and the graphs of the policy (``pictures``, from fxverify's renderers); a free
editor for one's own policy; ``explain`` for every code. ``http`` serves it with the standard library's threading HTTP server, bound to
127.0.0.1 unless told otherwise on purpose, confined to the repository, with capped requests.
"""

from __future__ import annotations
