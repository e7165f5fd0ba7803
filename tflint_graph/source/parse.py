"""Source text to libcst tree, guarded: a TFG001 finding instead of any exception.

Source CPython accepts is built from CPython's tree (``fromast``: about a quarter of
libcst's parse); the rest goes to libcst's parser.  Trees go through the process's
``TreeStore``, so a module analysed again is not parsed again.
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tflint_graph.core.finding import Finding, tool_finding
from tflint_graph.source import syntax
from tflint_graph.source.store import STORE, TreeStore
from tflint_graph.source.syntax import SyntaxVerdict

if TYPE_CHECKING:
    import libcst as cst


def verdict_of(
    source: str, tree: ast.Module | None = None, store: TreeStore = STORE
) -> SyntaxVerdict:
    """CPython's verdict on ``source``, cheaply: from ``tree`` (CPython's tree of it, when
    the caller has one: flake8 does), else remembered with its libcst tree, else parsed."""
    if tree is not None:
        return syntax.judge_tree(tree, source)
    remembered = store.remembered(source)
    if remembered is not None:
        return remembered[1]
    return syntax.judge_source(source)


_LIBCST_WHERE = re.compile(r"^(?:parser|tokenizer) error: (?:error at (\d+):(\d+): )?")


def parse(
    source: str,
    path: str,
    verdict: SyntaxVerdict | None = None,
    *,
    build: bool = True,
    store: TreeStore = STORE,
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
    verdict = verdict or verdict_of(source, store=store)
    python_error, too_deep, _ = verdict
    if too_deep is not None:
        if python_error is not None:
            return python_error_finding(path, python_error)
        return tool_finding(path, "TFG001", f"syntax error: {too_deep}")
    import libcst as cst  # not at start-up: runs answered from the cache never parse

    cached = store.remembered(source)
    if cached is not None:
        return cached[0]
    try:
        tree = verdict.tree
        checks = nodes_unchecked(cst.CSTNode) if tree is not None else contextlib.nullcontext()
        with checks:
            module = _built(source, tree) if tree is not None and build else None
            if module is None:
                module = cst.parse_module(source)
        store.remember(source, module, verdict, path)
        return module
    except cst.ParserSyntaxError as exc:
        if python_error is not None:
            return python_error_finding(path, python_error)
        module = _with_spaces(source)
        if module is not None:
            # Valid Python that libcst's tokenizer reads as inconsistent indentation (tabs
            # beside spaces): analysed with the tabs expanded as CPython counts them.
            # Columns on those lines shift; fixes re-parse the file itself, and leave it.
            store.remember(source, module, verdict, path)
            return module
        first = exc.message.strip().splitlines()[0] if exc.message.strip() else "invalid syntax"
        where = _LIBCST_WHERE.match(first)
        line, column = max(exc.raw_line, 1), exc.raw_column + 1
        if where is not None:
            if where.group(1):
                line, column = int(where.group(1)), int(where.group(2)) + 1
            first = first[where.end() :] or "invalid syntax"
        return tool_finding(
            path, "TFG001", f"cannot parse (libcst): {first}", max(line, 1), max(column, 1)
        )
    except RecursionError:
        return tool_finding(path, "TFG001", "syntax error: too deeply nested to parse")
    except Exception as exc:
        if python_error is not None:
            return python_error_finding(path, python_error)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return tool_finding(path, "TFG001", f"cannot parse (libcst): {first}")


def _with_spaces(source: str) -> cst.Module | None:
    """libcst's tree of ``source`` with each line's leading tabs expanded to the next
    multiple of eight columns (CPython's tab size); None when that does not parse either."""
    import libcst as cst

    if "\t" not in source:
        return None
    lines = source.splitlines(keepends=True)
    for i, line in enumerate(lines):
        body = line.lstrip(" \t")
        lead = line[: len(line) - len(body)]
        if "\t" in lead:
            lines[i] = lead.expandtabs(8) + body
    try:
        return cst.parse_module("".join(lines))
    except Exception:
        return None


def _built(source: str, tree: ast.Module) -> cst.Module | None:
    """libcst's tree of ``source`` built from CPython's ``tree`` (``fromast``: a quarter of
    libcst's parse), or None where that is not done (``TFLINT_GRAPH_LIBCST_PARSE=1`` turns it
    off, to compare results and timings)."""
    from tflint_graph.source import fromast  # its builder only where a tree is built

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
def nodes_unchecked(node_class: type) -> Iterator[None]:
    """Node checks off inside (nesting and threads allowed: back on when the last leaves)."""
    global _unchecked_users
    if "__post_init__" not in node_class.__dict__:  # a libcst without the hook: nothing to skip
        yield
        return
    with _unchecked_lock:
        if _unchecked_users == 0:
            # Read under the lock: read before it, another thread's `_no_check` could be
            # taken for the check and put back as such when the last user leaves.
            _checked.append(node_class.__dict__["__post_init__"])
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


def python_error_finding(path: str, exc: SyntaxError) -> Finding:
    message = (exc.msg or "invalid syntax").strip().splitlines()[0]
    return tool_finding(
        path, "TFG001", f"syntax error: {message}", max(exc.lineno or 1, 1), max(exc.offset or 1, 1)
    )
