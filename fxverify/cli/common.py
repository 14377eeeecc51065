"""What every ``fxverify`` command shares: problems of the command line on standard error, and
the group and command classes (help options without a value type, path parameters that refuse
an empty value).

Takes diagnostics (``diagnostics.model.Diagnostic``) and renders them as the text report does.
Emits FX-USE-005 for an empty path option or argument (``Command``, through click's usage error);
the other codes are the callers'.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.source import SourceMap


def problems(diags: list[Diagnostic], sources: SourceMap | None = None) -> None:
    """Render problems of the command itself (and generator input errors) on standard error,
    underlined against ``sources`` when they are given. Returns nothing; raises nothing."""
    from fxverify.render.text import render_diagnostic, to_plain

    lines = []
    for d in diags:
        lines += render_diagnostic(d, sources or SourceMap()) + ([[("", "")]] if sources is not None else [])
    sys.stderr.write(to_plain(lines))


def stop(code: codes.Code, message: str, help: str | None = None) -> typer.Exit:
    """Print one problem (``code``, ``message``, ``help``) and return the exit (code 2) to raise."""
    problems([diagnostic(code, message, help=help)])
    return typer.Exit(2)


class Group(typer.core.TyperGroup):
    """A typer group whose `--help` shows no value type: newer typers (0.29) make the help option
    a typer option, shown as `--help <bool>` although it takes no value (the flags below take
    `metavar=""` for the same reason)."""

    def get_help_option(self, ctx: typer.Context) -> Any:  # click's Option, or newer typers' own
        """The help option (``None`` where the command has none), with an empty metavar."""
        return _bare(super().get_help_option(ctx))


class Command(typer.core.TyperCommand):
    """A typer command whose `--help` shows no value type (``Group``), and whose path options
    and arguments refuse an empty value (``_no_empty_path``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            _no_empty_path(param)

    def get_help_option(self, ctx: typer.Context) -> Any:  # click's Option, or newer typers' own
        """The help option (``None`` where the command has none), with an empty metavar."""
        return _bare(super().get_help_option(ctx))


#: Why an empty path is refused, in the usage error (FX-USE-005) of any path option or argument.
EMPTY_PATH = ("an empty path was given (an empty shell variable gives an empty argument; "
              "write `.` for the current folder)")


def _no_empty_path(param: Any) -> None:
    """Make a path option or argument refuse an empty value with a usage error (FX-USE-005):
    click would read it as the path `.`, and `-o ""` would then say that the current folder is
    a folder. Typer 0.16 gives a parameter click's ``Path`` type, typer 0.29 a type descriptor
    of the annotation (``is_path``); both parse through ``Parameter.process_value``, which is wrapped here
    (the usage error is the ``BadParameter`` of the click the parameter comes from: typer ships
    its own copy of click in some versions)."""
    desc = getattr(param, "type_descriptor", None)
    kinds = {c.__name__ for c in type(getattr(param, "type", None)).__mro__}  # typer 0.16: click's Path (or TyperPath)
    if not (desc.is_path if desc is not None else "Path" in kinds):
        return
    base = next(c for c in type(param).__mro__ if c.__name__ == "Parameter")
    bad = sys.modules[base.__module__].BadParameter
    process = param.process_value

    def checked(ctx: Any, value: Any) -> Any:
        values = value if isinstance(value, (list, tuple)) else (value,)
        if any(isinstance(v, str) and not v for v in values):
            raise bad(EMPTY_PATH, ctx=ctx, param=param)
        return process(ctx, value)

    param.process_value = checked


def _bare(option: Any) -> Any:
    """``option`` (the help option, or ``None``) with its metavar set empty: it takes no value."""
    if option is not None:
        option.metavar = ""
    return option
