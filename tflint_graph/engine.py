"""The lint engine: read, parse once, find traced code, run every rule in one traversal.

Bad input never escapes as an exception: undecodable or unreadable files become TFG002,
unparsable ones TFG001, and the caller's other files are unaffected.
"""

from __future__ import annotations

import ast
import contextlib
import errno
import gc
import io
import logging
import os
import re
import stat
import threading
import tokenize
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from tflint_graph import cheap
from tflint_graph.config import Config
from tflint_graph.files import iter_python_files
from tflint_graph.finding import Finding, Severity
from tflint_graph.noqa import is_suppressed, source_lines
from tflint_graph.project import ModuleSummary, Project, ProjectView

if TYPE_CHECKING:
    import libcst as cst

    from tflint_graph.context import Prepared

_log = logging.getLogger("tflint_graph")

# A module that never mentions TensorFlow or Keras cannot contain code SPEC §1 calls traced,
# nor anything a rule reports (every root, call-site and export rule needs a TensorFlow or
# Keras name; cross-module facts arrive through the view), so it skips libcst entirely: see
# ``_untraced``.  A plain substring search: 1000 files cost well under a millisecond each.
_MAY_TRACE = re.compile(r"tensorflow|keras")  # `tf_keras` contains `keras`


def _tool_finding(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Finding:
    names = {"TFG001": "syntax-error", "TFG002": "unreadable-file"}
    return Finding(path, line, column, code, names[code], message, Severity.ERROR)


def decode(data: bytes, path: str) -> str | Finding:
    """Source text, or a TFG002 finding explaining why the bytes are not Python source.

    Honours a PEP 263 coding cookie and a UTF-8 BOM (which is stripped); undecodable bytes
    are reported at the line that holds them.
    """
    if b"\x00" in data:
        return _tool_finding(path, "TFG002", "binary file (contains NUL bytes); not linted")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as utf8_error:
            return _undecodable(data, path, "utf-8", utf8_error)
        return _tool_finding(path, "TFG002", f"cannot determine encoding: {exc.msg}; not linted")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        return _undecodable(data, path, encoding, exc)
    except LookupError as exc:
        return _tool_finding(path, "TFG002", f"unknown encoding: {exc}; not linted")
    return text.removeprefix("\ufeff")


def _undecodable(data: bytes, path: str, encoding: str, exc: UnicodeDecodeError) -> Finding:
    line = data.count(b"\n", 0, exc.start) + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    byte = data[exc.start : exc.start + 1].hex()
    name = "UTF-8" if encoding.lower().replace("_", "-") in ("utf-8", "utf-8-sig") else encoding
    return _tool_finding(
        path,
        "TFG002",
        f"not valid {name} text (byte 0x{byte}: {exc.reason}); not linted",
        line,
        column,
    )


# Deeper than this (in Python AST levels) libcst needs minutes and gigabytes, or overflows
# the C stack, and the analysis would hit the recursion limit anyway.  CPython itself stops
# at about 3000 levels and at 200 nested brackets.
MAX_NESTING = 500
_CPYTHON_TOO_DEEP = re.compile(r"too many nested parentheses|too many levels of indentation")


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)
_STATEMENTS = (ast.Module, *_BLOCKS)
_NEWLINE = re.compile(r"\r\n|\r|\n")


def _scan_tree(
    tree: ast.AST, limit: int, source: str | None = None
) -> tuple[bool, ast.Nonlocal | None]:
    """(whether the libcst tree of ``tree`` would nest deeper than ``limit`` nodes, a
    ``nonlocal`` at module level).

    libcst nests ``a and b and c`` (flat in ``ast``) one level per operand.  A module-level
    ``nonlocal`` passes ``ast.parse`` (CPython rejects it only when compiling) but makes
    libcst's scope analysis raise.

    Statements are always walked; an expression only when it could be deep enough: it
    nests at most about two levels per character of its text, so with ``source`` given,
    expressions whose lines are short next to the limit are skipped (nearly all of them).
    """
    ends: list[int] | None = None
    if source is not None:
        ends, total = [0], 0
        for line in _NEWLINE.split(source):
            total += len(line) + 1
            ends.append(total)
    stack: list[tuple[ast.AST, int, bool]] = [(tree, 0, False)]
    children = cheap.child_nodes
    stray: ast.Nonlocal | None = None
    while stack:
        node, depth, scoped = stack.pop()
        if isinstance(node, ast.BoolOp):
            depth += len(node.values) - 1
        elif isinstance(node, ast.Nonlocal) and not scoped and stray is None:
            stray = node
        if depth > limit:
            return True, stray
        scoped = scoped or isinstance(node, _SCOPES)
        statement = ends is not None and isinstance(node, _STATEMENTS)
        for child in children(node):
            if statement and not isinstance(child, _BLOCKS):
                first, last = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
                if (
                    first is not None
                    and last is not None
                    and last < len(ends)
                    and depth + 1 + 3 * (ends[last] - ends[first - 1]) + 8 <= limit
                ):
                    continue  # too short to nest past the limit
            stack.append((child, depth + 1, scoped))
    return False, stray


_Verdict: TypeAlias = tuple[SyntaxError | None, str | None, ast.Module | None]


def _python_syntax_check(source: str, tree: ast.Module | None = None) -> _Verdict:
    """CPython's own verdict, cheaply: (its SyntaxError, if any; why the source is too
    deeply nested to parse, if it is; the ``ast`` tree when the source is fine).
    ``tree`` is CPython's tree of ``source`` when the caller has it (flake8 does)."""
    if tree is not None:
        return _judge_tree(tree, source)
    remembered = _remembered(source)
    if remembered is not None:
        return remembered[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning for "\d" in strings, etc.
        try:
            # CRLF: CPython puts an error at the end of the file one line past it.
            tree = cheap.parse_python(source.replace("\r\n", "\n") if "\r\n" in source else source)
        except SyntaxError as exc:
            # Only the message and position are used: without its traceback the error does
            # not hold the caller's frame (a reference cycle through the verdict).
            exc.__traceback__ = None
            if exc.msg and _CPYTHON_TOO_DEEP.search(exc.msg):
                return exc, exc.msg, None
            return exc, None, None
        except (RecursionError, MemoryError):
            return None, "too deeply nested to parse", None
        except ValueError as exc:  # "source code string cannot contain null bytes"
            return SyntaxError(str(exc)), None, None
    return _judge_tree(tree, source)


def _judge_tree(tree: ast.Module, source: str) -> _Verdict:
    too_deep, stray = _scan_tree(tree, MAX_NESTING, source)
    if too_deep:
        return None, f"too deeply nested to parse (more than {MAX_NESTING} levels)", None
    if stray is not None:
        error = SyntaxError("nonlocal declaration not allowed at module level")
        error.lineno, error.offset = stray.lineno, stray.col_offset + 1
        return error, error.msg, None
    return None, None, tree


# Modules another module reaches are analysed again with what the run learnt (project.py):
# keep the libcst trees (and CPython's verdict) of the latest sources of this process so
# that a second analysis does not parse again (parsing is the largest part of one).  Trees
# are never mutated.  A libcst tree takes about 40 bytes per source character, CPython's
# about 10: the bound keeps this under ~50 MB.
_PARSED: OrderedDict[str, tuple[cst.Module, _Verdict]] = OrderedDict()
_PARSED_MAX_CHARS = 1_000_000
_parsed_chars = 0
# With a remembered tree, what its last analysis prepared from it (index, scopes): taken out
# while an analysis uses it, so that no two threads share one, and released with the tree.
# Every remembered tree keeps one: built trees (``fromast``) are a third of libcst's parsed
# ones, and second analyses that rebuilt the index and scopes spent a seventh of a run on
# it (generated 200k-line tree; largest process at 500k lines: 267 MB, 158 MB when only
# the latest 250k characters kept theirs).
_PREPARED: OrderedDict[str, Prepared] = OrderedDict()
_PREPARED_MAX_CHARS = 1_000_000
_prepared_chars = 0
# Files the run expects to analyse again (``Project.likely_reached``, by display path): both
# stores give up their trees last.  Without it, on a 200k-line tree most modules reached
# from other modules had been evicted by the time the run knew their roots, and were
# parsed again.  Set for a run by ``_keeping_first`` (before the pool forks: workers inherit it).
_keep_first: frozenset[str] = frozenset()
_first_sources: set[str] = set()  # remembered sources of such files
# A tree is kept first until it serves its second analysis: a file parsed again (its tree
# was given up after all) is kept like any other, or re-parses would evict each other in
# turn.  Hashes of the sources kept first so far.
_kept_before: set[int] = set()


_parsed_lock = threading.Lock()  # the library may be called from several threads


def _remembered(source: str) -> tuple[cst.Module, _Verdict] | None:
    with _parsed_lock:
        found = _PARSED.get(source)
        if found is not None:
            _PARSED.move_to_end(source)
            _first_sources.discard(source)
        return found


def _remember(source: str, module: cst.Module, verdict: _Verdict, first: bool = False) -> None:
    global _parsed_chars
    if len(source) > _PARSED_MAX_CHARS // 4:
        return
    evicted: list[Prepared] = []
    with _parsed_lock:
        if source in _PARSED:
            return
        _PARSED[source] = (module, verdict)
        _parsed_chars += len(source)
        if first and hash(source) not in _kept_before:
            _first_sources.add(source)
            _kept_before.add(hash(source))
        while _parsed_chars > _PARSED_MAX_CHARS:
            old = _evictable(_PARSED)
            del _PARSED[old]
            _first_sources.discard(old)
            _parsed_chars -= len(old)
            prepared = _drop_prepared(old)
            if prepared is not None:
                evicted.append(prepared)
    for prepared in evicted:
        prepared.release()


def _evictable(store: OrderedDict[str, Any]) -> str:
    """The least recently used source of ``store`` that the run does not expect to analyse
    again, else the least recently used one (the caller holds the lock)."""
    return next((s for s in store if s not in _first_sources), next(iter(store)))


@contextlib.contextmanager
def _keeping_first(paths: Iterable[str]) -> Iterator[None]:
    """Inside, the trees of ``paths`` (as displayed) are the last the stores give up."""
    global _keep_first
    before, _keep_first = _keep_first, frozenset(paths)
    try:
        yield
    finally:
        _keep_first = before
        with _parsed_lock:  # what stays remembered is kept like any other tree
            _first_sources.clear()
            _kept_before.clear()


def _may_outgrow_stores(files: list[Path], processes: int) -> bool:
    """Whether the run's sources may be more than its processes' stores keep (else every
    tree stays anyway, and which to keep first need not be worked out)."""
    total = 0
    for file in files:
        with contextlib.suppress(OSError):
            total += os.stat(file).st_size
        if total > processes * _PARSED_MAX_CHARS:
            return True
    return False


def _drop_prepared(source: str) -> Prepared | None:
    """Take ``source``'s prepared analysis out of the store (the caller holds the lock)."""
    global _prepared_chars
    prepared = _PREPARED.pop(source, None)
    if prepared is not None:
        _prepared_chars -= len(source)
    return prepared


def _take_prepared(source: str) -> Prepared | None:
    with _parsed_lock:
        return _drop_prepared(source)


def _keep_prepared(source: str, prepared: Prepared | None) -> None:
    global _prepared_chars
    if prepared is None:
        return
    evicted: list[Prepared] = []
    with _parsed_lock:
        entry = _PARSED.get(source)
        # Only for the remembered tree itself (two threads may have parsed the same source).
        if entry is not None and entry[0] is prepared.index.root and source not in _PREPARED:
            _PREPARED[source] = prepared
            _prepared_chars += len(source)
            prepared = None
            while _prepared_chars > _PREPARED_MAX_CHARS and len(_PREPARED) > 1:
                oldest = _evictable(_PREPARED)
                evicted.append(_PREPARED.pop(oldest))
                _prepared_chars -= len(oldest)
    for old in ([prepared] if prepared is not None else []) + evicted:
        old.release()


def _forget(source: str) -> None:
    """Drop the tree remembered for ``source`` (and what was prepared from it)."""
    global _parsed_chars
    with _parsed_lock:
        if _PARSED.pop(source, None) is not None:
            _parsed_chars -= len(source)
            _first_sources.discard(source)
        prepared = _drop_prepared(source)
    if prepared is not None:
        prepared.release()


def forget_parsed() -> None:
    """Drop the trees this process remembers (and release what was prepared from them)."""
    global _parsed_chars, _prepared_chars
    with _parsed_lock:
        prepared = list(_PREPARED.values())
        _PREPARED.clear()
        _PARSED.clear()
        _first_sources.clear()
        _kept_before.clear()
        _parsed_chars = _prepared_chars = 0
    for p in prepared:
        p.release()


_LIBCST_WHERE = re.compile(r"^(?:parser|tokenizer) error: (?:error at (\d+):(\d+): )?")


def _parse(
    source: str, path: str, verdict: _Verdict | None = None, *, build: bool = True
) -> cst.Module | Finding:
    """The module's libcst tree, guarded: a TFG001 finding instead of any exception.

    Source CPython accepts is built from CPython's tree (``fromast``) unless ``build`` is
    False or it is not rebuilt there; else libcst parses it.

    CPython's parser runs first (it is fast): it rejects pathologically nested code before
    libcst spends minutes on it, and its messages and positions are the ones users know
    (``Missing parentheses in call to 'print'``), so they are used whenever both parsers
    reject the file.  Syntax that only a newer Python accepts still goes to libcst.
    ``verdict`` is CPython's, when the caller already has it.
    """
    verdict = verdict or _python_syntax_check(source)
    python_error, too_deep, _ = verdict
    if too_deep is not None:
        if python_error is not None:
            return _python_error_finding(path, python_error)
        return _tool_finding(path, "TFG001", f"syntax error: {too_deep}")
    import libcst as cst

    cached = _remembered(source)
    if cached is not None:
        return cached[0]
    try:
        tree = verdict[2]
        checks = _nodes_unchecked(cst.CSTNode) if tree is not None else contextlib.nullcontext()
        with checks:
            module = _built(source, tree) if tree is not None and build else None
            if module is None:
                module = cst.parse_module(source)
        _remember(source, module, verdict, path in _keep_first)
        return module
    except cst.ParserSyntaxError as exc:
        if python_error is not None:
            return _python_error_finding(path, python_error)
        first = exc.message.strip().splitlines()[0] if exc.message.strip() else "invalid syntax"
        where = _LIBCST_WHERE.match(first)
        line, column = max(exc.raw_line, 1), exc.raw_column + 1
        if where is not None:
            if where.group(1):
                line, column = int(where.group(1)), int(where.group(2)) + 1
            first = first[where.end() :] or "invalid syntax"
        return _tool_finding(
            path, "TFG001", f"cannot parse (libcst): {first}", max(line, 1), max(column, 1)
        )
    except RecursionError:
        return _tool_finding(path, "TFG001", "syntax error: too deeply nested to parse")
    except Exception as exc:
        if python_error is not None:
            return _python_error_finding(path, python_error)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return _tool_finding(path, "TFG001", f"cannot parse (libcst): {first}")


def _built(source: str, tree: ast.Module) -> cst.Module | None:
    """libcst's tree of ``source`` built from CPython's ``tree`` (``fromast``: a quarter of
    libcst's parse), or None where that is not done (``TFLINT_GRAPH_LIBCST_PARSE=1`` turns it
    off, to compare results and timings)."""
    from tflint_graph import fromast

    if os.environ.get("TFLINT_GRAPH_LIBCST_PARSE", "") == "1":
        return None
    try:
        return fromast.build(source, tree)
    except fromast.Unsupported:
        return None


# libcst checks every node it constructs (``CSTNode.__post_init__`` runs ``_validate``).  On
# source CPython accepted, the nodes its parser builds are valid by construction, and the
# checks cost about an eighth of the parse: they are off while the engine parses such source.
# ``_validate`` only raises (it sets nothing), so the trees are the same.
_unchecked_lock = threading.Lock()
_unchecked_users = 0
_checked: list[object] = []


@contextlib.contextmanager
def _nodes_unchecked(node_class: type) -> Iterator[None]:
    """Node checks off inside (nesting and threads allowed: back on when the last leaves)."""
    global _unchecked_users
    check = node_class.__dict__.get("__post_init__")
    if check is None:  # a libcst without the hook: nothing to skip
        yield
        return
    with _unchecked_lock:
        if _unchecked_users == 0:
            _checked.append(check)
            node_class.__post_init__ = _no_check  # type: ignore[attr-defined]
        _unchecked_users += 1
    try:
        yield
    finally:
        with _unchecked_lock:
            _unchecked_users -= 1
            if _unchecked_users == 0:
                node_class.__post_init__ = _checked.pop()  # type: ignore[attr-defined]


def _no_check(self: object) -> None:
    pass


def _python_error_finding(path: str, exc: SyntaxError) -> Finding:
    message = (exc.msg or "invalid syntax").strip().splitlines()[0]
    return _tool_finding(
        path, "TFG001", f"syntax error: {message}", max(exc.lineno or 1, 1), max(exc.offset or 1, 1)
    )


def lint_source(
    source: str,
    path: str = "<stdin>",
    config: Config | None = None,
    *,
    noqa: bool = True,
) -> list[Finding]:
    """Lint one module's source text and return its findings, sorted.

    ``path`` is only used for reporting and for ``per-file-ignores``; nothing is read from
    disk, so calls into other modules are not followed (``lint_paths`` does that).  Syntax
    errors are returned as a TFG001 finding, never raised.  ``noqa=False`` keeps findings
    that a ``# noqa`` comment silences (the flake8 plugin: flake8 applies noqa itself).
    """
    return analyse_source(source, path, config or Config(), noqa=noqa)[0]


def analyse_source(
    source: str,
    path: str,
    config: Config,
    view: ProjectView | None = None,
    *,
    noqa: bool = True,
    python_tree: ast.Module | None = None,
) -> tuple[list[Finding], ModuleSummary | None]:
    """Findings of one module (filtered and sorted) and what other modules of the run may
    learn from it; ``view`` is what the run knows about this module's neighbours.
    ``noqa=False`` skips ``# noqa`` filtering; ``python_tree`` is ``ast.parse(source)``
    when the caller has it (it is not parsed again)."""
    with _gc_paused(len(source)):
        return _analyse_source(source, path, config, view, noqa, python_tree)


# Cyclic garbage collection costs about a quarter of a run: the ~200k objects of each libcst
# tree and its analysis trigger many collections, each traversing the trees still alive.  It
# is paused while a module is analysed (and for a whole ``lint_paths`` run, workers
# included).  The analysis breaks its own reference cycles, so its memory comes back by
# reference counting (``tests/test_memory.py``); whatever else is left in a cycle is
# collected at the first collection after, or here after every few MB of analysed source.
_GC_EVERY_CHARS = 4_000_000
_gc_lock = threading.Lock()
_gc_users = 0
_gc_was_enabled = False
_gc_debt = 0


@contextlib.contextmanager
def _gc_paused(chars: int = 0) -> Iterator[None]:
    """Cyclic GC off inside (nesting and threads allowed); ``chars`` of source analysed
    inside count towards the next forced collection while an outer pause holds."""
    global _gc_users, _gc_was_enabled, _gc_debt
    with _gc_lock:
        if _gc_users == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_users += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_users -= 1
            _gc_debt += chars
            if _gc_users == 0:
                _gc_debt = 0
                if _gc_was_enabled:
                    gc.enable()
            elif _gc_debt > _GC_EVERY_CHARS:
                # With collections off every object is young: collecting generation 0
                # traverses only what was allocated since the last one.
                _gc_debt = 0
                gc.collect(0)


def _analyse_source(
    source: str,
    path: str,
    config: Config,
    view: ProjectView | None,
    noqa: bool,
    python_tree: ast.Module | None,
) -> tuple[list[Finding], ModuleSummary | None]:
    view = view or ProjectView()
    summary: ModuleSummary | None = None
    full = bool(
        config.extra_function_decorators
        or view.roots
        or view.keras_classes
        or view.tf_functions
        or view.remote
        or view.exported
    )
    verdict = _python_syntax_check(source, python_tree)
    tree, scan = verdict[2], None
    if not full and _MAY_TRACE.search(source) is not None:
        # A TensorFlow module whose code names nothing that could be traced (see
        # cheap.may_hold_traced) has nothing traced of its own and nothing a rule checks
        # outside traced code (data and constant modules, plain tf.Module code): until the
        # run reaches into it (the view), it is summarised from CPython's tree like a module
        # without TensorFlow.
        if not prefilter_enabled():
            full = True
        elif cheap.TRACE_TEXT.search(source) is not None:
            scan = cheap.Scan(tree, view) if tree is not None else None
            full = scan is None or cheap.may_hold_traced(scan)
    if not full:
        findings, summary = _untraced(source, path, view, verdict, scan)
    else:
        parsed = _parse(source, path, verdict)
        if isinstance(parsed, Finding):
            findings = [parsed]
        else:
            from tflint_graph.dispatch import run_rules
            from tflint_graph.fromast import Unsupported

            prepared = _take_prepared(source)
            try:
                findings, summary, prepared = run_rules(
                    parsed, source, path, config, view, verdict[2], prepared, keep=True
                )
            except Unsupported:
                # libcst cannot give the positions of a tree built from CPython's (it parses
                # the file differently, or not at all): its own tree is analysed instead.
                _forget(source)
                parsed = _parse(source, path, verdict, build=False)
                findings, summary, prepared = (
                    ([parsed], None, None)
                    if isinstance(parsed, Finding)
                    else run_rules(parsed, source, path, config, view, verdict[2], keep=True)
                )
            _keep_prepared(source, prepared)
    lines = source_lines(source) if noqa else []
    kept = [
        f
        for f in findings
        if config.is_enabled(f.code, path) and not (noqa and is_suppressed(lines, f.line, f.code))
    ]
    return sorted(set(kept), key=lambda f: f.sort_key), summary


def prefilter_enabled() -> bool:
    """Whether modules that cannot hold traced code skip libcst (the default).

    ``TFLINT_GRAPH_NO_PREFILTER=1`` in the environment restores the old path (libcst parse and
    libcst summary for every module) to compare results and timings side by side.  Results
    are the same (``tests/test_prefilter.py``) except for a file that CPython accepts but
    libcst cannot parse: without TensorFlow in it, it is no longer a TFG001.
    """
    return os.environ.get("TFLINT_GRAPH_NO_PREFILTER", "") != "1"


def _untraced(
    source: str, path: str, view: ProjectView, verdict: _Verdict, scan: cheap.Scan | None = None
) -> tuple[list[Finding], ModuleSummary | None]:
    """A module that cannot hold traced code and that no other module reaches: no rule can
    report anything, only its summary (imports, classes, called imports) is needed.

    CPython's tree gives it (``cheap.py``); libcst runs only where CPython rejects the source,
    to report TFG001 exactly as ``_parse`` does (or accept syntax newer than this Python).
    ``verdict`` is CPython's on ``source``; ``scan`` the walk of its tree, when made.
    """
    tree = verdict[2]
    if tree is not None and prefilter_enabled():
        imports = cheap.module_imports(tree, view)
        return [], ModuleSummary(
            view.module,
            reexports=imports,
            called_imports=(scan or cheap.Scan(tree, view)).called_imports(),
            classes=cheap.module_classes(tree, imports),
        )
    parsed = _parse(source, path, verdict)
    if isinstance(parsed, Finding):
        return [parsed], None
    from tflint_graph.summary import called_imports, module_classes, module_imports

    imports = module_imports(parsed, view)
    return [], ModuleSummary(
        view.module,
        reexports=imports,
        called_imports=called_imports(parsed, view),
        classes=module_classes(parsed, imports),
    )


def lint_file(
    path: Path, config: Config | None = None, display: str | None = None
) -> list[Finding]:
    """Lint one file on disk on its own (calls into other modules are not followed);
    unreadable or undecodable files give TFG002."""
    return analyse_file(path, config or Config(), display)[0]


def analyse_file(
    path: Path, config: Config, display: str | None = None, view: ProjectView | None = None
) -> tuple[list[Finding], ModuleSummary | None]:
    """``analyse_source`` for a file on disk; never raises."""
    shown = display or str(path)
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            return _unreadable(shown, f"{what}; not linted", config), None
        data = Path(path).read_bytes()
    except OSError as exc:
        return _unreadable(shown, f"cannot read file: {_os_reason(Path(path), exc)}", config), None
    decoded = decode(data, shown)
    if isinstance(decoded, Finding):
        return ([decoded] if config.is_enabled("TFG002", shown) else []), None
    try:
        return analyse_source(decoded, shown, config, view)
    except Exception as exc:
        _log.warning(
            "internal error while linting %s: %s: %s (please report this)",
            shown,
            type(exc).__name__,
            exc,
        )
        return [], None


def _unreadable(shown: str, message: str, config: Config) -> list[Finding]:
    if not config.is_enabled("TFG002", shown):
        return []
    return [_tool_finding(shown, "TFG002", message)]


def _os_reason(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symbolic link loop"
    if exc.errno == errno.ENOENT and path.is_symlink():
        return "dangling symbolic link (its target does not exist)"
    if exc.errno == errno.ENOENT:
        return "file vanished during the run"
    return exc.strerror or str(exc)


class WarningCounter(logging.Handler):
    """Counts the warnings (internal errors) logged while it is attached."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextlib.contextmanager
def _counting_warnings() -> Iterator[list[int]]:
    """Counts warnings the run logs (yields a list that holds the count afterwards)."""
    handler, count = WarningCounter(), []
    _log.addHandler(handler)
    try:
        yield count
    finally:
        _log.removeHandler(handler)
        if handler.count:
            count.append(handler.count)


def lint_paths(
    paths: Iterable[str | os.PathLike[str]],
    config: Config | None = None,
    *,
    jobs: int | None = None,
    cache: bool | Path | None = None,
) -> Iterator[Finding]:
    """Lint files and directories (recursively, honouring excludes); yields sorted findings.

    The files form one run: traced code that calls into another module of the run (or into
    a module next to them that imports resolve to) makes that code traced too, and calls of
    tf.functions imported from other modules are judged at their call sites.

    A path that does not exist raises ``FileNotFoundError`` before anything is linted: the CLI
    turns it into a usage error (exit 2).  A directory that cannot be read gives a TFG002
    finding on that directory; the rest of the run goes on.

    ``jobs`` analyses files in that many processes (default 1: in-process); the findings
    are the same for any number.  ``cache`` reuses results of earlier runs: ``True`` keeps
    them in ``.tflint-graph-cache`` next to the pyproject.toml found for ``paths`` (else in
    the working directory), a path keeps them there; default none.
    """
    from tflint_graph.cache import RunRecords, open_cache

    config = config or Config()
    errors: list[tuple[Path, str]] = []
    targets = [Path(p) for p in paths]
    files = sorted(iter_python_files(targets, config, errors), key=str)
    store = open_cache(cache, targets, config) if files else None
    records = RunRecords(store) if store is not None else None
    ticket = records.ticket(files) if records is not None else None
    found = records.load(ticket) if records is not None and ticket is not None else None
    if found is None:
        project = Project(files, config, analyse_file, jobs=jobs or 1, cache=store)
        reached = (
            {str(f) for r in project.likely_reached() for f in project.in_run[r]}
            if _may_outgrow_stores(files, jobs or 1)
            else set()
        )
        with _counting_warnings() as warned, _gc_paused(), _keeping_first(reached):
            results = project.run()
        found = {str(p): results[p] for p in files}
        # A run that logged an internal error is redone next time, warning included.
        if records is not None and ticket is not None and not warned:
            records.store(ticket, found, *project.consulted())
    work: list[tuple[str, list[Finding]]] = [(str(p), found[str(p)]) for p in files]
    work += [
        (str(d), [_tool_finding(str(d), "TFG002", reason)])
        for d, reason in errors
        if config.is_enabled("TFG002", str(d))
    ]
    for _, found in sorted(work, key=lambda item: item[0]):
        yield from found
