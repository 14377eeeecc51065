"""Configuration of ``fxverify check`` from a file: ``.fxverify.toml`` or ``[tool.fxverify]`` in
``pyproject.toml``.

Takes the folder a run starts in (the current folder) or an explicit file (``--config``);
produces the settings the file gives, as values of ``check``'s parameters, or FX-USE-008
diagnostics (``file:line:col``, the line underlined) for a file that is not TOML, a key that is
not a setting, or a value of the wrong type. ``SETTINGS`` lists the keys; each is also read from
the environment as ``FXVERIFY_<KEY>`` (``fail-on``: ``FXVERIFY_FAIL_ON``), which the command line
does through click's ``envvar``. Precedence (``specs/output.md``, Configuration): command line >
environment > configuration file > defaults.

Which file: from the current folder upwards, the first folder holding ``.fxverify.toml``, or a
``pyproject.toml`` with a ``[tool.fxverify]`` table, wins (in one folder ``.fxverify.toml`` comes
first); the search stops at the repository root (the first folder holding ``.git``). Relative paths
in the file (``baseline``, ``cache-dir``) are relative to the file's folder. The keys are the long
option names without dashes in front; lists are TOML arrays. Emits FX-USE-008 only.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic, nearest
from fxverify.fileio import NotUtf8, decode_utf8
from fxverify.source import SourceMap, Span
from fxverify.vocab import SOLVER_PARAM_MAX

#: The file names searched in each folder, in order of precedence.
CONFIG_FILES = (".fxverify.toml", "pyproject.toml")

#: Prefix of the environment variables that give settings (``FXVERIFY_FAIL_ON``).
ENV_PREFIX = "FXVERIFY_"


@dataclass(frozen=True)
class Setting:
    """One configuration key: ``key`` as written in the file (the long option's name), the
    ``check`` parameter it sets, its TOML type (``str``, ``int``, ``bool`` or ``list`` of
    strings), the allowed values of a string (``choices``), and whether it is a path (relative to
    the file's folder)."""

    key: str
    param: str
    kind: type
    choices: tuple[str, ...] = ()
    path: bool = False
    minimum: int | None = None
    maximum: int | None = None

    @property
    def env(self) -> str:
        """The environment variable that gives this setting."""
        return ENV_PREFIX + self.key.upper().replace("-", "_")


SETTINGS: tuple[Setting, ...] = (
    Setting("select", "select", list),
    Setting("ignore", "ignore", list),
    Setting("exclude", "exclude", list),
    Setting("fail-on", "fail_on", str, ("error", "warning")),
    Setting("unknown", "unknown", str, ("fail", "warn")),
    Setting("exit-zero", "exit_zero", bool),
    Setting("baseline", "baseline", str, path=True),
    Setting("jobs", "jobs", int, minimum=1),
    Setting("executor", "executor", str),
    Setting("timeout", "timeout", int, minimum=1, maximum=SOLVER_PARAM_MAX),
    Setting("rlimit", "rlimit", int, minimum=1, maximum=SOLVER_PARAM_MAX),
    Setting("seed", "seed", int, minimum=0, maximum=SOLVER_PARAM_MAX),
    Setting("solver", "solver", str, ("z3", "cvc5", "portfolio")),
    Setting("cache-dir", "cache_dir", str, path=True),
    Setting("no-cache", "no_cache", bool),
    Setting("no-prune", "no_prune", bool),
    Setting("no-parametric", "no_parametric", bool),
    Setting("quiet", "quiet", bool),
    Setting("color", "color", str, ("auto", "always", "never")),
    Setting("junit-per-obligation", "junit_per_obligation", bool),
)

_BY_KEY = {s.key: s for s in SETTINGS}


@dataclass
class Config:
    """The settings a configuration file gives (``values``: ``check`` parameter -> value, paths
    made relative to the current folder's view of the file) and the file they came from
    (``None``: no file)."""

    path: str | None = None
    values: dict[str, Any] = field(default_factory=dict)


class ConfigError(Exception):
    """A configuration file that cannot be used: ``diagnostics`` (FX-USE-008) over ``sources``
    (which holds the file's text, for the underlined line)."""

    def __init__(self, diagnostics: list[Diagnostic], sources: SourceMap) -> None:
        super().__init__(diagnostics[0].message if diagnostics else "bad configuration")
        self.diagnostics = diagnostics
        self.sources = sources


def find_config(start: str = ".") -> str | None:
    """The configuration file for a run started in ``start`` (see the module docstring), or
    ``None``; relative to the current folder (``../pyproject.toml``), as diagnostics show it. A
    ``pyproject.toml`` that cannot be parsed counts as a configuration when a line of it names the
    ``tool.fxverify`` table in any TOML spelling (so its error is reported, not skipped); one that
    does not is another tool's file, skipped as a valid one without the table is."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        for name in CONFIG_FILES:
            f = folder / name
            if f.is_file() and (name != "pyproject.toml" or _has_tool_table(f)):
                return os.path.relpath(f)
        if (folder / ".git").exists():
            return None
    return None


def _has_tool_table(py: Path) -> bool:
    """Whether ``py`` sets ``tool.fxverify``: read as TOML, or, when it is not valid TOML (or not
    UTF-8), when a line of it names the table in any spelling TOML allows (``_names_tool_table``),
    so that fxverify reports the file it would have read instead of skipping it."""
    try:
        raw = py.read_bytes()
    except OSError:
        return False
    try:
        return "fxverify" in tomllib.loads(raw.decode("utf-8")).get("tool", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return _names_tool_table(raw.decode("utf-8", "replace"))


_HEADER = re.compile(r"^\s*\[\[?([^\[\]]*)\]")
_KEY = re.compile(r"^\s*((?:[\w-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[\w-]+|\"[^\"]*\"|'[^']*'))*)\s*=")
_PART = re.compile(r"[\w-]+|\"([^\"]*)\"|'([^']*)'")


def _names_tool_table(text: str) -> bool:
    """Whether a line of ``text`` (TOML that need not parse) is a table header or key at or under
    ``tool.fxverify``: ``[tool.fxverify]``, ``[tool.fxverify.x]``, ``[ "tool" . 'fxverify' ]``, or a
    key ``fxverify`` under ``[tool]``, or ``tool.fxverify.jobs = 2`` at the top. Line by line, as a
    broken document cannot be parsed as a whole; a look-alike inside a multi-line string counts too
    (the error is then reported rather than a configuration skipped)."""
    table: list[str] = []
    for line in text.splitlines():
        head = _HEADER.match(line)
        if head is not None:
            table = _key_parts(head.group(1))
            if table[:2] == ["tool", "fxverify"]:
                return True
            continue
        key = _KEY.match(line)
        if key is not None and (table + _key_parts(key.group(1)))[:2] == ["tool", "fxverify"]:
            return True
    return False


def _key_parts(key: str) -> list[str]:
    """A dotted TOML key's parts, unquoted: ``tool . "fxverify"`` -> ``["tool", "fxverify"]``."""
    return [m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(0)
            for m in _PART.finditer(key)]


_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


def load_config(path: str) -> Config:
    """Read the settings of ``path`` (``.fxverify.toml``: the top-level table; ``pyproject.toml``:
    ``[tool.fxverify]``). Raises ``ConfigError`` (FX-USE-008) for a file that cannot be read or
    parsed, an unknown key or a wrong value; every bad key is reported, not only the first."""
    sources = SourceMap()
    try:
        text = decode_utf8(Path(path).read_bytes())
    except OSError as err:
        raise ConfigError([diagnostic(codes.USE_008, f"cannot read the configuration file `{path}`: "
                                      f"{err.strerror or err}",
                                      help="fix or remove the file, or name another with `--config FILE`")],
                          sources) from None
    except NotUtf8 as err:
        sources.add(path, err.shown)
        raise ConfigError([diagnostic(codes.USE_008, f"cannot read the configuration file `{path}`: it is not UTF-8 text",
                                      Span(path, err.at, err.at + 1), "not UTF-8", notes=(f"found {err.found}",),
                                      help="TOML files are UTF-8: save the file as UTF-8, or name another with "
                                           "`--config FILE`")],
                          sources) from None
    sources.add(path, text)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError([_toml_error(path, text, str(err))], sources) from None
    pyproject = Path(path).name == CONFIG_FILES[1]
    table = doc.get("tool", {}).get("fxverify", {}) if pyproject else doc
    where = "[tool.fxverify]" if pyproject else "the file"
    if not isinstance(table, dict):
        raise ConfigError([diagnostic(codes.USE_008, "`tool.fxverify` is not a table", _key_span(path, text, "fxverify", pyproject),
                                      "not a table", help="write the settings under a `[tool.fxverify]` header")], sources)
    problems: list[Diagnostic] = []
    values: dict[str, Any] = {}
    folder = os.path.dirname(path)
    for key, value in table.items():
        setting = _BY_KEY.get(key)
        span = _key_span(path, text, key, pyproject)
        if setting is None:
            near = nearest(key, _BY_KEY)
            problems.append(diagnostic(codes.USE_008, f"`{key}` is not a setting of {where}" +
                                       (f"; did you mean `{near}`?" if near else ""), span, "unknown key",
                                       help="settings: " + ", ".join(f"`{s.key}`" for s in SETTINGS)))
            continue
        why = _wrong(setting, value)
        if why is not None:
            problems.append(diagnostic(codes.USE_008, f"`{key}` {why}", span, "wrong value",
                                       help=_expected(setting)))
            continue
        if setting.path:
            value = os.path.normpath(os.path.join(folder, value)) if folder and not os.path.isabs(value) else value
        values[setting.param] = list(value) if setting.kind is list else value
    if problems:
        raise ConfigError(problems, sources)
    return Config(path, values)


def _wrong(s: Setting, value: Any) -> str | None:
    """Why ``value`` is not a value of ``s``, or ``None`` when it is."""
    names = {str: "a string", int: "an integer", bool: "true or false", list: "an array of strings"}
    if s.kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        return f"must be {names[int]}, not {_toml_type(value)}"
    if s.kind is not int and not isinstance(value, s.kind):
        return f"must be {names[s.kind]}, not {_toml_type(value)}"
    if s.kind is list and not all(isinstance(v, str) for v in value):
        return f"must be {names[list]}"
    if s.choices and value not in s.choices:
        return f"must be one of {', '.join(repr(c) for c in s.choices)}, not {value!r}"
    if s.minimum is not None and value < s.minimum:
        return f"must be at least {s.minimum}, not {value}"
    if s.maximum is not None and value > s.maximum:
        return f"must be at most {s.maximum} (the solver reads it as a 32-bit number), not {value}"
    return None


def _expected(s: Setting) -> str:
    if s.choices:
        return f"write `{s.key} = \"{s.choices[0]}\"` (or {', '.join(repr(c) for c in s.choices[1:])})"
    example = {str: '"path"', int: "2", bool: "true", list: '["..."]'}[s.kind]
    if s.maximum is not None:
        return f"write an integer from {s.minimum} to {s.maximum}, for example `{s.key} = {example}`"
    return f"write `{s.key} = {example}`"


def _toml_type(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array",
            dict: "a table"}.get(type(value), type(value).__name__)


def _toml_error(path: str, text: str, message: str) -> Diagnostic:
    """FX-USE-008 at the position tomllib's message gives (``(at line L, column C)``)."""
    m = _POSITION.search(message)
    if m is not None:
        lines = text.splitlines(keepends=True)
        line, col = int(m[1]), int(m[2])
        start = sum(len(ln) for ln in lines[:line - 1]) + col - 1
    else:  # "(at end of document)"
        start = len(text.rstrip())
    start = max(0, min(start, len(text)))
    what = _POSITION.sub("", message).replace("(at end of document)", "").strip()
    return diagnostic(codes.USE_008, f"`{path}` is not valid TOML: {what[:1].lower() + what[1:]}",
                      Span(path, start, min(start + 1, len(text)) if start < len(text) else start), "here",
                      help="fix the file (https://toml.io), or name another with `--config FILE`")


def _key_span(path: str, text: str, key: str, pyproject: bool) -> Span:
    """The span of ``key`` where it is set (in ``[tool.fxverify]`` for a ``pyproject.toml``); the
    table's header, or the file's start, when it cannot be found."""
    begin = 0
    if pyproject:
        head = re.search(r"^\s*\[\s*tool\s*\.\s*fxverify\s*\]", text, re.M)
        if head is not None:
            begin = head.end()
    m = re.compile(rf"^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=", re.M).search(text, begin)
    if m is None:
        return Span(path, begin, begin)
    at = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
    return Span(path, at, at + len(key) + (2 if text[at] in "\"'" else 0))


def settings(given: dict[str, Any], config: str | None, source: Callable[[str], str | None]) -> dict[str, Any]:
    """``given`` (``check``'s parameters as parsed) with those that neither the command line nor
    the environment set (``source(name)`` is click's parameter source by name: ``DEFAULT``,
    ``DEFAULT_MAP`` or ``None``) taken from the configuration file ``config`` (``None``: the one
    ``find_config`` finds). Precedence: command line > environment > file > defaults. Raises
    ``ConfigError`` (FX-USE-008)."""
    path = config if config is not None else find_config(".")
    if path is None:
        return given
    out = dict(given)
    for name, value in load_config(path).values.items():
        if source(name) in (None, "DEFAULT", "DEFAULT_MAP"):
            out[name] = value
    return out
