"""The language server, ``fxverify lsp``: diagnostics as you type, hover, go-to-definition,
completion and code actions for ``.fx`` policies, over stdio, on pygls.

Takes LSP requests and notifications from an editor; answers them from the checker's own
pipeline. A change to a document is checked after ``DEBOUNCE_S`` of quiet: its unsaved text (and
that of every other open ``.fx`` document, so an unsaved include counts too) is handed to the
checker in memory (``resolve.load_policy``'s ``texts``; nothing is written to the user's tree),
first to load the policy and index its names in a worker thread, then to check it in a child
process (``isolate.IsolatedCheck``) that a newer change kills, so a stale or slow check never
blocks hover or definition and never outlives its text. A document that declares no policy (a
shared fragment) is checked through the open or on-disk policies that include it
(``gate.discover.includers``); with none, only its syntax is. Diagnostics carry the code, the
primary span, related spans, the replayed trace's steps and the hint (``lsp.convert``); hover shows
``lsp.hover``, definition the ``lsp.index`` declaration, completion ``lsp.complete``; a code action
writes a verified hint into the text (``lsp.actions``), and one that generalises an instance's
ordering to its family is offered only after the edited text is checked again.

Emits no diagnostics of its own: a check that raises is shown as its FX-INT-001, a check past its
caps as FX-SMT-001 (``isolate``). Every request gets a response: one whose parameters do not fit
the LSP types (a negative position...) gets JSON-RPC's -32602 (``_Protocol``), a query that raises
gets -32603 with the FX-INT-001 message and no traceback (``_answers``), a document that is neither
open nor readable answers ``null``. pygls's own log goes to standard error one line per record,
never a traceback (``quiet_log``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCRequestMessage

from fxverify import __version__
from fxverify.diagnostics.model import Diagnostic, crash
from fxverify.gate.discover import includers
from fxverify.isolate import Caps, IsolatedCheck, warm
from fxverify.lsp import actions
from fxverify.lsp.complete import complete
from fxverify.lsp.convert import path_of, to_lsp, to_range, uri_of
from fxverify.lsp.hover import code_at, code_summary, code_text, hover
from fxverify.lsp.index import Include, Index, Occurrence, Symbol, build
from fxverify.pipeline import CheckOptions
from fxverify.resolve import Limits, load_policy
from fxverify.resolve.snapshot import repo_root
from fxverify.result import CheckResult
from fxverify.source import SourceMap
from fxverify.syntax.parse import header_decls, parse

#: Seconds of quiet after a change before the document is checked.
DEBOUNCE_S = 0.3
#: Fixes that generalise an instance's ordering to its family, checked again per check.
MAX_FAMILY_FIXES = 3
#: Policies re-checked for a change to a shared fragment.
MAX_INCLUDERS = 4

_KIND = {"device": lsp.CompletionItemKind.Module, "hook": lsp.CompletionItemKind.Event,
         "link": lsp.CompletionItemKind.Interface, "space": lsp.CompletionItemKind.Struct,
         "region": lsp.CompletionItemKind.Variable, "alias set": lsp.CompletionItemKind.Enum,
         "map": lsp.CompletionItemKind.Field, "flow": lsp.CompletionItemKind.Class,
         "edge": lsp.CompletionItemKind.Function, "keyword": lsp.CompletionItemKind.Keyword,
         "word": lsp.CompletionItemKind.Constant}


@dataclass
class Analysis:
    """One load of a policy: its sources, load diagnostics, index, and the versions of the open
    documents it read (code actions apply only to the text they were computed on)."""

    sources: SourceMap
    policy_loaded: bool
    diagnostics: list[Diagnostic]
    index: Index
    versions: dict[str, int] = field(default_factory=dict)


def analyze(root: str, texts: dict[str, str], limits: Limits) -> Analysis:
    """Load ``root`` with the unsaved ``texts`` and index its names (in a worker thread)."""
    sources = SourceMap()
    policy, diags = load_policy(root, sources, limits=limits, texts=texts)
    return Analysis(sources, policy is not None, diags, build(sources, policy, max_depth=limits.max_depth))


@dataclass
class _Job:
    """The checks of one root policy's text: the asyncio task, and the child processes it runs
    (killed by ``cancel``, from any thread)."""

    task: asyncio.Task | None = None
    checks: list[IsolatedCheck] = field(default_factory=list)
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True
        for c in list(self.checks):
            c.cancel()
        if self.task is not None:
            self.task.cancel()

    def run(self, root: str, options: CheckOptions, texts: dict[str, str], caps: Caps,
            cache_dir: str | None = None) -> CheckResult | None:
        """Check in a child process and wait (in a worker thread: starting the first child waits
        for the fork server), with the result cache's families level in ``cache_dir`` if given;
        ``None`` when the job was cancelled meanwhile."""
        check = IsolatedCheck(root, options, texts, caps, cache_dir)
        self.checks.append(check)
        if self.cancelled:  # cancelled while the child started: nobody else will kill it
            check.cancel()
        return check.wait()


@dataclass(frozen=True)
class _Offer:
    """A fix offered as a code action: the file and LSP diagnostic it answers, the fix, and the
    document versions it was computed on."""

    file: str
    diagnostic: lsp.Diagnostic
    fix: actions.Fix
    sources: SourceMap
    versions: dict[str, int]


#: The method a request whose parameters do not fit its LSP type is redirected to; its handler
#: answers -32602 through pygls's own response path (JSON-RPC 2.0 section 5.1).
INVALID_PARAMS = "$/fxverify/invalidParams"


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, except that a request whose parameters fail to structure (pygls would
    only show a message, and the client would wait forever for its answer) is answered with
    -32602: it is redirected to ``INVALID_PARAMS`` with the original method named in its params."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Structure one JSON object of a message (pygls's ``object_hook``)."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and isinstance(data.get("method"), str) and "error" not in data:
                return JsonRPCRequestMessage(id=data["id"], method=INVALID_PARAMS, jsonrpc=self.VERSION,
                                             params={"method": data["method"], "error": exc.message})
            raise


_F = TypeVar("_F", bound=Callable[..., Any])


def _answers(handler: _F) -> _F:
    """A request handler whose exceptions become a -32603 response that carries the FX-INT-001
    message only (pygls would attach the Python traceback as ``data``)."""

    @functools.wraps(handler)
    def run(ls: FxLanguageServer, params: Any) -> Any:
        try:
            return handler(ls, params)
        except JsonRpcException:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug answers FX-INT-001; the server goes on
            uri = getattr(getattr(params, "text_document", None), "uri", "a request")
            d = crash(uri, exc)
            raise JsonRpcInternalError(message=f"{d.code}: {d.message}") from None
    return run  # type: ignore[return-value]


class _OneLine(logging.Formatter):
    """The first line of a record's message, without its traceback."""

    def format(self, record: logging.LogRecord) -> str:
        lines = record.getMessage().splitlines()
        return f"fxverify lsp: {record.levelname.lower()}: {lines[0] if lines else ''}"


def quiet_log(stream: Any = None) -> logging.Handler:
    """Send pygls's log records of WARNING and above to ``stream`` (standard error by default),
    one line each without traceback; returns the handler installed."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(_OneLine())
    log = logging.getLogger("pygls")
    log.handlers[:] = [handler]
    log.setLevel(logging.WARNING)
    log.propagate = False
    return handler


class FxLanguageServer(LanguageServer):
    """The server's state: last analyses, running checks, published diagnostics and fixes, all
    keyed by the path of the root policy they belong to."""

    def __init__(self, options: CheckOptions = CheckOptions(), caps: Caps = Caps(), debounce: float = DEBOUNCE_S,
                 cache_dir: str | None = None) -> None:
        super().__init__("fxverify", __version__, protocol_cls=_Protocol,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.options, self.caps, self.debounce = options, caps, debounce
        self.cache_dir = cache_dir  # the result cache's families level for every check (None: none)
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fxverify-check")
        self.analyses: dict[str, Analysis] = {}
        self.jobs: dict[str, _Job] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self.published: dict[str, dict[str, list[lsp.Diagnostic]]] = {}
        self.offers: dict[str, list[_Offer]] = {}
        self.versions: dict[str, int] = {}  # path -> version of the text last checked

    # ---- documents ------------------------------------------------------------------------------

    def units(self, s: str) -> int:
        """Code units of ``s`` in the negotiated position encoding."""
        return self.workspace.position_codec.client_num_units(s)

    def open_docs(self) -> dict[str, tuple[str, str, int]]:
        """Open ``file:`` documents: path -> (uri, text, version)."""
        out = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            path = path_of(uri)
            if path is not None:
                out[path] = (uri, doc.source, doc.version or 0)
        return out

    def uri(self, path: str) -> str:
        """The URI the client uses for ``path`` (its own, when the document is open)."""
        for p, (uri, _, _) in self.open_docs().items():
            if p == path:
                return uri
        return uri_of(path)

    def changed(self, uri: str, delay: float) -> None:
        """A document was opened, changed or saved: check what it belongs to after ``delay``."""
        path = path_of(uri)
        if path is None:
            return
        old = self.pending.pop(path, None)
        if old is not None:
            old.cancel()
        self.pending[path] = asyncio.get_running_loop().create_task(self._after(path, delay))

    async def _after(self, path: str, delay: float) -> None:
        await asyncio.sleep(delay)
        self.pending.pop(path, None)
        docs = self.open_docs()
        text = docs[path][1] if path in docs else None
        if text is not None and header_decls(text)[0]:
            roots = [path]
        else:
            roots = await asyncio.get_running_loop().run_in_executor(self.pool, self._includers, path)
        if not roots and text is not None:
            self._syntax_only(path, text)
        for root in roots:
            self.start(root)

    def _includers(self, path: str) -> list[str]:
        """The policies a fragment belongs to: open ones that include it, then those on disk."""
        found = [r for r, a in self.analyses.items() if r != path and path in a.sources.paths()]
        try:
            found += [os.path.abspath(p) for p in includers(path, repo_root(path))]
        except OSError:
            pass
        return list(dict.fromkeys(found))[:MAX_INCLUDERS]

    def _syntax_only(self, path: str, text: str) -> None:
        sources = SourceMap()
        sources.add(path, text)
        _, diags = parse(text, path)
        self.publish(path, sources, diags, {path: self.open_docs()[path][2]} if path in self.open_docs() else None)

    def closed(self, uri: str) -> None:
        """A document was closed: forget what was checked with it as the root; the policies that
        include it are checked again with the file as it is on disk."""
        path = path_of(uri)
        if path is None:
            return
        if any(path in a.sources.paths() for r, a in self.analyses.items() if r != path):
            self.changed(uri, 0.0)
        job = self.jobs.pop(path, None)
        if job is not None:
            job.cancel()
        self.analyses.pop(path, None)
        self.offers.pop(path, None)
        old = self.published.pop(path, {})
        for f in old:
            self.send(f)

    # ---- checking -------------------------------------------------------------------------------

    def start(self, root: str) -> None:
        """(Re)start the check of ``root``, cancelling the one running."""
        old = self.jobs.pop(root, None)
        if old is not None:
            old.cancel()
        job = _Job()
        self.jobs[root] = job
        job.task = asyncio.get_running_loop().create_task(self._check(root, job))

    async def _check(self, root: str, job: _Job) -> None:
        loop = asyncio.get_running_loop()
        docs = self.open_docs()
        texts = {os.path.realpath(p): t for p, (_, t, _) in docs.items()}
        versions = {p: v for p, (_, _, v) in docs.items()}
        try:
            a = await loop.run_in_executor(self.pool, analyze, root, texts, self.options.limits)
            a.versions = versions
            old = self.analyses.get(root)
            # a text that does not parse keeps the last index of it, for hover and definition
            if root in a.index.modules or old is None:
                self.analyses[root] = a
            if not a.policy_loaded:
                self.offers[root] = []
                self.publish(root, a.sources, a.diagnostics, versions)
                return
            result = await loop.run_in_executor(self.pool, job.run, root, self.options, texts, self.caps,
                                                self.cache_dir)
            if result is None:
                return
            self.publish(root, a.sources, result.diagnostics, versions)
            self.offers[root] = await self._offers(root, a, result, texts, job)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - shown as FX-INT-001, the server goes on
            self.publish(root, SourceMap(), [crash(root, exc)])

    async def _offers(self, root: str, a: Analysis, result: CheckResult, texts: dict[str, str], job: _Job) -> list[_Offer]:
        """The fixes of ``result``'s verified hints; family generalisations checked again first."""
        out, family = [], 0
        loop = asyncio.get_running_loop()
        for d in result.diagnostics:
            fix = actions.fix_of(d, a.index, result.hints.get(d.obligation))
            if fix is None:
                continue
            if fix.needs_check:
                family += 1
                if family > MAX_FAMILY_FIXES:
                    continue
                edited = {os.path.realpath(p): t for p, t in actions.apply_all(a.sources, fix.edits).items()}
                after = await loop.run_in_executor(self.pool, job.run, root, replace(self.options, verify_hints=False),
                                                   {**texts, **edited}, self.caps, self.cache_dir)
                if after is None or not actions.holds(result, d, after):
                    continue
            file, ld = to_lsp(d, a.sources, self.units, root)
            out.append(_Offer(file, ld, fix, a.sources, a.versions))
        return out

    def publish(self, root: str, sources: SourceMap, diags: list[Diagnostic], versions: dict[str, int] | None = None) -> None:
        """Record ``diags`` as the findings of ``root`` and send every file they touch; ``versions``
        are those of the open documents the check read (sent with each file's diagnostics)."""
        by_file: dict[str, list[lsp.Diagnostic]] = {}
        for d in diags:
            file, ld = to_lsp(d, sources, self.units, root)
            by_file.setdefault(file, []).append(ld)
        old = self.published.get(root, {})
        self.published[root] = by_file
        self.versions.update(versions or {})
        for f in dict.fromkeys([*old, *by_file, root]):
            self.send(f)

    def send(self, file: str) -> None:
        """Publish the diagnostics of ``file`` from every root that reached it (deduplicated)."""
        seen, out = set(), []
        for per in self.published.values():
            for ld in per.get(file, []):
                key = (ld.range.start.line, ld.range.start.character, ld.range.end.line, ld.range.end.character,
                       ld.code, ld.message)
                if key not in seen:
                    seen.add(key)
                    out.append(ld)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=self.uri(file), diagnostics=out,
                                                                             version=self.versions.get(file)))

    def shutdown_checks(self) -> None:
        """Cancel every running check (on ``shutdown``)."""
        for job in self.jobs.values():
            job.cancel()
        for t in self.pending.values():
            t.cancel()

    # ---- queries --------------------------------------------------------------------------------

    def analysis(self, path: str) -> Analysis | None:
        """The last analysis that read ``path``: its own, else one of a policy including it."""
        if path in self.analyses:
            return self.analyses[path]
        return next((a for a in self.analyses.values() if path in a.sources.paths()), None)

    def entry(self, path: str, offset: int, line: str, col: int) -> tuple[Analysis, object] | None:
        """The index entry at ``offset`` of ``path``; when the index has none there (the text
        changed since, or does not parse), the declared name under the cursor."""
        a = self.analysis(path)
        if a is None:
            return None
        found = a.index.at(path, offset)
        if found is None:
            word = _word(line, col)
            sym = _by_name(a.index, word) if word else None
            found = None if sym is None else Occurrence(sym.span, sym.kind, sym.name)
        return None if found is None else (a, found)

    def hover_text(self, path: str, offset: int, line: str, col: int, pos: lsp.Position) -> str | None:
        """The Markdown hover at a position (see ``lsp.hover``) and the codes of the diagnostics
        there."""
        parts = []
        code = code_at(line, col)
        if code is not None:
            parts.append(code_text(code))
        else:
            got = self.entry(path, offset, line, col)
            text = hover(got[0].index, got[1], got[0].sources) if got else None
            if text:
                parts.append(text)
        for per in self.published.values():
            for ld in per.get(path, []):
                if _contains(ld.range, pos) and isinstance(ld.code, str):
                    parts.append(code_summary(ld.code))
        return "\n\n---\n\n".join(dict.fromkeys(p for p in parts if p)) or None

    def definition(self, path: str, offset: int, line: str, col: int) -> lsp.Location | None:
        """Where the name at a position is declared, or the file an ``include`` names."""
        got = self.entry(path, offset, line, col)
        if got is None:
            return None
        a, entry = got
        if isinstance(entry, Include):
            return lsp.Location(self.uri(os.path.abspath(entry.target)), lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)))
        if isinstance(entry, Occurrence):
            sym = a.index.symbol(entry)
            if sym is not None:
                return lsp.Location(self.uri(sym.span.file), to_range(a.sources, sym.span, self.units))
        return None

    def code_actions(self, path: str, rng: lsp.Range) -> list[lsp.CodeAction]:
        """Quick fixes of the verified hints whose diagnostics overlap ``rng`` in ``path``, for
        the document versions they were computed on."""
        docs = self.open_docs()
        out = []
        for offers in self.offers.values():
            for o in offers:
                if o.file != path or not _overlaps(o.diagnostic.range, rng):
                    continue
                files = actions.files_of(o.fix.edits)
                if any(f in docs and docs[f][2] != o.versions.get(f) for f in files):
                    continue  # the text changed since: a newer check will offer it again
                changes = {self.uri(f): [lsp.TextEdit(to_range(o.sources, e.span, self.units), e.text)
                                         for e in o.fix.edits if e.span.file == f] for f in files}
                out.append(lsp.CodeAction(o.fix.title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[o.diagnostic],
                                          edit=lsp.WorkspaceEdit(changes=changes), is_preferred=True))
        return out


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?")
_ORDER = ("edge", "region", "device", "hook", "space", "map", "link", "alias set", "flow")


def _word(line: str, col: int) -> str | None:
    return next((m.group() for m in _WORD.finditer(line) if m.start() <= col <= m.end()), None)


def _by_name(idx: Index, name: str) -> Symbol | None:
    return next((idx.symbols[(k, name)] for k in _ORDER if (k, name) in idx.symbols), None)


def _le(a: lsp.Position, b: lsp.Position) -> bool:
    return (a.line, a.character) <= (b.line, b.character)


def _contains(r: lsp.Range, p: lsp.Position) -> bool:
    return _le(r.start, p) and _le(p, r.end)


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    return _le(a.start, b.end) and _le(b.start, a.end)


def make_server(options: CheckOptions = CheckOptions(), caps: Caps = Caps(), debounce: float = DEBOUNCE_S,
                cache_dir: str | None = None) -> FxLanguageServer:
    """A language server with every feature registered (``start_io`` runs it); its checks use
    the result cache's families level in ``cache_dir`` when given."""
    server = FxLanguageServer(options, caps, debounce, cache_dir)

    def _at(params: lsp.TextDocumentPositionParams) -> tuple[str, int, str, int] | None:
        path = path_of(params.text_document.uri)
        if path is None:
            return None
        doc = server.workspace.get_text_document(params.text_document.uri)
        try:  # a document the client never opened is read from disk; one that is not there has no names
            lines = doc.lines
        except (OSError, UnicodeDecodeError):
            return None
        line = lines[params.position.line] if params.position.line < len(lines) else ""
        col = server.workspace.position_codec.position_from_client_units(lines, params.position).character if lines else 0
        return path, doc.offset_at_position(params.position), line.rstrip("\r\n"), col

    @server.feature(lsp.INITIALIZED)
    def _initialized(ls: FxLanguageServer, params: lsp.InitializedParams) -> None:
        ls.pool.submit(warm)  # start the checker's fork server while the editor opens files

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def _open(ls: FxLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, 0.0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    async def _change(ls: FxLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, ls.debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def _save(ls: FxLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, 0.0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    async def _close(ls: FxLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.closed(params.text_document.uri)

    @server.feature(INVALID_PARAMS)
    def _invalid(ls: FxLanguageServer, params: Any) -> None:
        got = params if isinstance(params, dict) else {}
        raise JsonRpcInvalidParams(message=f"{got.get('error', 'Invalid Params')}: the params of `{got.get('method', '?')}` "
                                           "do not fit its LSP type")

    @server.feature(lsp.SHUTDOWN)
    def _shutdown(ls: FxLanguageServer, params: None) -> None:
        ls.shutdown_checks()

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    @_answers
    def _hover(ls: FxLanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
        at = _at(params)
        text = ls.hover_text(*at, params.position) if at else None
        return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text)) if text else None

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    @_answers
    def _definition(ls: FxLanguageServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        at = _at(params)
        return ls.definition(*at) if at else None

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["."]))
    @_answers
    def _complete(ls: FxLanguageServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        at = _at(params)
        if at is None:
            return lsp.CompletionList(False, [])
        path, _, line, col = at
        a = ls.analysis(path)
        items = complete(a.index if a else None, line[:col])
        return lsp.CompletionList(False, [lsp.CompletionItem(i.label, kind=_KIND.get(i.kind, lsp.CompletionItemKind.Text),
                                                             detail=i.detail or i.kind) for i in items])

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    @_answers
    def _actions(ls: FxLanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        path = path_of(params.text_document.uri)
        return ls.code_actions(path, params.range) if path else []

    return server


def serve_stdio(options: CheckOptions = CheckOptions(), caps: Caps = Caps(), cache_dir: str | None = None) -> None:
    """Run the language server on standard input and output until the client exits; its checks
    use the result cache's families level in ``cache_dir`` when given."""
    quiet_log()
    server = make_server(options, caps, cache_dir=cache_dir)
    try:
        server.start_io()
    finally:
        server.shutdown_checks()
        server.pool.shutdown(wait=False, cancel_futures=True)
