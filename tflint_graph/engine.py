"""The lint engine: read, parse once, find traced code, run every rule in one traversal.

Bad input never escapes as an exception: undecodable or unreadable files become TFG002,
unparsable ones TFG001, and the caller's other files are unaffected.
"""

from __future__ import annotations

import io
import logging
import os
import re
import tokenize
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import libcst as cst

from tflint_graph.checks import ALL_RULES, Rule
from tflint_graph.config import Config
from tflint_graph.context import FunctionNode, ModuleContext, TracedFunction
from tflint_graph.files import iter_python_files
from tflint_graph.finding import Finding, Severity
from tflint_graph.noqa import is_suppressed
from tflint_graph.traced import find_traced

_log = logging.getLogger("tflint_graph")

# A module that never mentions TensorFlow or Keras cannot contain code SPEC §1 calls traced
# (cross-module callees aside), so it skips the metadata pass entirely.
_MAY_TRACE = re.compile(r"tensorflow|keras|tf_keras")


def _tool_finding(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Finding:
    names = {"TFG001": "syntax-error", "TFG002": "unreadable-file"}
    return Finding(path, line, column, code, names[code], message, Severity.ERROR)


def decode(data: bytes, path: str) -> str | Finding:
    """Source text, or a TFG002 finding explaining why the bytes are not Python source."""
    if b"\x00" in data:
        return _tool_finding(path, "TFG002", "binary file (contains NUL bytes); not linted")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return _tool_finding(path, "TFG002", f"cannot determine encoding: {exc.msg}")
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        return _tool_finding(path, "TFG002", f"not valid {encoding} text ({reason}); not linted")
    return text.removeprefix("\ufeff")


def _parse(source: str, path: str) -> cst.Module | Finding:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        message = exc.message.strip().splitlines()[0] if exc.message else "invalid syntax"
        return _tool_finding(
            path, "TFG001", f"syntax error: {message}", max(exc.raw_line, 1), exc.raw_column + 1
        )
    except RecursionError:
        return _tool_finding(path, "TFG001", "syntax error: too deeply nested to parse")
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return _tool_finding(path, "TFG001", f"syntax error: {first}")


class _Dispatcher(cst.CSTVisitor):
    """Walks the module once and hands each node of traced code to the rules."""

    def __init__(self, ctx: ModuleContext, rules: Sequence[Rule]) -> None:
        self.ctx = ctx
        self.stack: list[TracedFunction | None] = [None]
        self.handlers: dict[str, list[tuple[Callable[..., None], bool]]] = {}
        for rule in rules:
            for attr in dir(rule):
                if attr.startswith("visit_"):
                    self.handlers.setdefault(attr[6:], []).append(
                        (getattr(rule, attr), rule.traced_only)
                    )

    def _dispatch(self, node: cst.CSTNode) -> None:
        handlers = self.handlers.get(type(node).__name__)
        if handlers:
            fn = self.stack[-1]
            for handler, traced_only in handlers:
                if fn is not None or not traced_only:
                    handler(node, fn)

    def _enter_function(self, node: FunctionNode, body: cst.CSTNode) -> None:
        self.stack.append(self.ctx.traced.get(node))
        body.visit(self)
        self.stack.pop()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self._dispatch(node)
        if isinstance(node, cst.FunctionDef):
            # Decorators, defaults and annotations run in the enclosing scope.
            for dec in node.decorators:
                dec.visit(self)
            node.params.visit(self)
            if node.returns is not None:
                node.returns.visit(self)
            self._enter_function(node, node.body)
            return False
        if isinstance(node, cst.Lambda):
            node.params.visit(self)
            self._enter_function(node, node.body)
            return False
        return True


def lint_source(
    source: str,
    path: str = "<stdin>",
    config: Config | None = None,
) -> list[Finding]:
    """Lint one module's source text and return its findings, sorted.

    ``path`` is only used for reporting and for ``per-file-ignores``; nothing is read from
    disk.  Syntax errors are returned as a TFG001 finding, never raised.
    """
    config = config or Config()
    parsed = _parse(source, path)
    if isinstance(parsed, Finding):
        findings = [parsed]
    elif not _MAY_TRACE.search(source) and not config.extra_function_decorators:
        findings = []
    else:
        findings = _run_rules(parsed, source, path, config)
    lines = source.splitlines()
    kept = [
        f
        for f in findings
        if config.is_enabled(f.code, path) and not is_suppressed(lines, f.line, f.code)
    ]
    return sorted(set(kept), key=lambda f: f.sort_key)


def _run_rules(module: cst.Module, source: str, path: str, config: Config) -> list[Finding]:
    try:
        ctx = ModuleContext(path, source, module, config)
        ctx.traced = find_traced(ctx)
    except RecursionError:
        return [_tool_finding(path, "TFG001", "syntax error: too deeply nested to analyse")]
    rules_enabled = [r for r in ALL_RULES if config.is_enabled(r.code, path)]
    if not ctx.traced and all(r.traced_only for r in rules_enabled):
        return []
    findings: list[Finding] = []
    rules = [r(ctx, findings) for r in rules_enabled]
    try:
        module.visit(_Dispatcher(ctx, rules))
    except RecursionError:
        return [_tool_finding(path, "TFG001", "syntax error: too deeply nested to analyse")]
    return findings


def lint_file(
    path: Path, config: Config | None = None, display: str | None = None
) -> list[Finding]:
    """Lint one file on disk; unreadable or undecodable files give TFG002."""
    shown = display or str(path)
    try:
        if not path.is_file():
            if path.is_symlink() and not path.exists():
                raise OSError("dangling symbolic link or symlink loop")
            if path.exists():
                return [_tool_finding(shown, "TFG002", "not a regular file; not linted")]
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return [_tool_finding(shown, "TFG002", f"cannot read file: {reason}")]
    decoded = decode(data, shown)
    if isinstance(decoded, Finding):
        return [decoded] if (config or Config()).is_enabled("TFG002", shown) else []
    try:
        return lint_source(decoded, shown, config)
    except Exception as exc:
        _log.warning(
            "internal error while linting %s: %s: %s (please report this)",
            shown,
            type(exc).__name__,
            exc,
        )
        return []


def lint_paths(
    paths: Iterable[str | os.PathLike[str]], config: Config | None = None
) -> Iterator[Finding]:
    """Lint files and directories (recursively, honouring excludes); yields sorted findings.

    A path that does not exist raises ``FileNotFoundError`` before anything is linted: the CLI
    turns it into a usage error (exit 2).
    """
    config = config or Config()
    files = iter_python_files([Path(p) for p in paths], config)
    for path in sorted(files, key=str):
        yield from lint_file(path, config)
