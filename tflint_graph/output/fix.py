"""Automatic fixes (``--fix`` / ``--diff``): safe, formatting-preserving libcst rewrites.

The rules stay unaware of fixing.  A fix is planned from a finding the run already reported
(so ``# noqa``, ``--select``/``--ignore`` and per-file ignores have already been applied):
the file is parsed again, the node whose exact range the finding names is located, and the
fixer for the finding's code returns its replacement, or ``None`` when the rewrite would not
be provably equivalent.  Only the replaced nodes change: everything else in the module,
comments and whitespace included, keeps its bytes.

Fixable codes:

* TFG101 ``print(a, b)`` -> ``tf.print(a, b)`` with the module's own ``import tensorflow as
  X`` binding; ``file=sys.stdout``/``sys.stderr`` becomes ``output_stream=``, ``sep=`` and
  ``end=`` are kept.  Skipped when there is no such binding visible at the call, or an
  argument has no ``tf.print`` equivalent (``flush=``, ``file=`` an open file, ``**kwargs``).
* TFG209 ``ta.write(i, v)`` as a statement -> ``ta = ta.write(i, v)`` (also ``scatter``,
  ``unstack``, ``split``), only when the receiver is a plain name.
"""

from __future__ import annotations

import codecs
import difflib
import io
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst.metadata import (
    Assignment,
    MetadataWrapper,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from tflint_graph.core.finding import Finding

FIXABLE = frozenset({"TFG101", "TFG209"})

# builtin print() keyword -> tf.print() keyword (tf.print accepts output_stream, sep, end,
# summarize and name; flush= has no counterpart).
_PRINT_KEYWORDS = {"sep": "sep", "end": "end", "file": "output_stream"}
# The only file objects tf.print's output_stream accepts (besides logging levels and
# "file://" URLs, which print's file= never is).
_STREAMS = frozenset({"sys.stdout", "sys.stderr"})

_Span = tuple[int, int, int, int]  # line, column (1-based), end line, end column


@dataclass(frozen=True)
class FileFix:
    """The planned rewrite of one file: texts are decoded, bytes are what goes to disk."""

    path: str
    original: str
    fixed: str
    data: bytes
    new_data: bytes
    count: int  # findings fixed

    def diff(self) -> str:
        """A unified diff with ``a/`` and ``b/`` paths, as git and ruff print them."""
        name = self.path.replace("\\", "/").lstrip("/")
        lines = difflib.unified_diff(
            _diff_lines(self.original), _diff_lines(self.fixed), f"a/{name}", f"b/{name}"
        )
        return "".join(lines)

    def write(self) -> None:
        Path(self.path).write_bytes(self.new_data)


def _diff_lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def plan_fixes(findings: Iterable[Finding]) -> list[FileFix]:
    """The rewrites that would fix ``findings`` (those of a lint run), one per changed file,
    sorted by path.  Files that would not change, cannot be read back identically, or whose
    fixed text would not parse are left out."""
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        if f.code in FIXABLE and f.end_line is not None:
            by_path.setdefault(f.path, []).append(f)
    plans = [plan for path, found in sorted(by_path.items()) if (plan := _plan_file(path, found))]
    return plans


def _plan_file(path: str, findings: Sequence[Finding]) -> FileFix | None:
    try:
        data = Path(path).read_bytes()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        bom = data.startswith(codecs.BOM_UTF8)
        if encoding == "utf-8-sig":
            encoding = "utf-8"
        text = data.decode(encoding).removeprefix("\ufeff")

        def encode(source: str) -> bytes:
            return ("\ufeff" + source if bom else source).encode(encoding)

        if encode(text) != data:  # would not round-trip: never risk rewriting it
            return None
    except (OSError, SyntaxError, UnicodeError, LookupError):
        return None
    fixed, count = fix_source(text, findings)
    if count == 0 or fixed == text:
        return None
    try:
        new_data = encode(fixed)
    except UnicodeError:
        return None
    return FileFix(path, text, fixed, data, new_data, count)


def fix_source(source: str, findings: Sequence[Finding]) -> tuple[str, int]:
    """``source`` with every fixable finding of ``findings`` (findings of this exact text)
    fixed, and how many were; ``(source, 0)`` when nothing can be fixed safely."""
    try:
        module = cst.parse_module(source)
    except Exception:
        return source, 0
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    wanted: dict[_Span, set[str]] = {}
    for f in findings:
        if f.code in FIXABLE and f.end_line is not None and f.end_column is not None:
            wanted.setdefault((f.line, f.column, f.end_line, f.end_column), set()).add(f.code)
    targets: dict[cst.Call, set[str]] = {}
    for node, where in positions.items():
        if isinstance(node, cst.Call):
            span = (where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)
            if span in wanted:
                targets[node] = wanted[span]
    if not targets:
        return source, 0
    fixer = _Fixer(module, wrapper, targets)
    fixed_module = module.visit(fixer)
    if fixer.count == 0:
        return source, 0
    fixed = fixed_module.code
    if not _reparses(fixed):  # the safety net: a fix must never leave the file unparsable
        return source, 0
    return fixed, fixer.count


def _reparses(source: str) -> bool:
    try:
        cst.parse_module(source)
        compile(source, "<fixed>", "exec", dont_inherit=True)
    except Exception:
        return False
    return True


class _Fixer(cst.CSTTransformer):
    def __init__(
        self, module: cst.Module, wrapper: MetadataWrapper, targets: dict[cst.Call, set[str]]
    ) -> None:
        super().__init__()
        self.targets = targets
        self.positions = wrapper.resolve(PositionProvider)
        self.scopes = wrapper.resolve(ScopeProvider)
        self.qualified = wrapper.resolve(QualifiedNameProvider)
        self.tf_imports = _tensorflow_imports(module)
        self.count = 0

    # TFG209 ------------------------------------------------------------------------------

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr) -> cst.BaseSmallStatement:
        call = original_node.value
        if not isinstance(call, cst.Call) or "TFG209" not in self.targets.get(call, ()):
            return updated_node
        func = call.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return updated_node  # `self.ta.write(...)`: rebinding an attribute is not local
        self.count += 1
        return cst.Assign(
            targets=[cst.AssignTarget(target=cst.Name(func.value.value))],
            value=updated_node.value,
            semicolon=updated_node.semicolon,
        )

    # TFG101 ------------------------------------------------------------------------------

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if "TFG101" not in self.targets.get(original_node, ()):
            return updated_node
        if not isinstance(updated_node.func, cst.Name) or updated_node.func.value != "print":
            return updated_node
        alias = self._tensorflow_alias(original_node)
        if alias is None:
            return updated_node
        args: list[cst.Arg] = []
        for original_arg, arg in zip(original_node.args, updated_node.args, strict=True):
            if arg.star == "**":
                return updated_node  # unknown keywords
            if arg.keyword is None:
                args.append(arg)
                continue
            keyword = arg.keyword.value
            if keyword not in _PRINT_KEYWORDS:
                return updated_node  # flush=, or something print() would reject anyway
            value = original_arg.value
            if isinstance(value, cst.Name) and value.value == "None":
                return updated_node  # print's "use the default"; tf.print has no such value
            if keyword == "file" and not self._is_std_stream(value):
                return updated_node  # tf.print cannot write to an arbitrary file object
            args.append(arg.with_changes(keyword=cst.Name(_PRINT_KEYWORDS[keyword])))
        self.count += 1
        return updated_node.with_changes(
            func=cst.Attribute(value=cst.Name(alias), attr=cst.Name("print")), args=args
        )

    def _is_std_stream(self, value: cst.BaseExpression) -> bool:
        names = self.qualified.get(value, set())
        if callable(names):  # libcst computes qualified names lazily
            names = names()
        return bool(names) and all(q.name in _STREAMS for q in names)

    def _tensorflow_alias(self, call: cst.Call) -> str | None:
        """A name bound to the ``tensorflow`` module wherever ``call`` runs, or None."""
        scope = self.scopes.get(call)
        if scope is None:
            return None
        line = self.positions[call].start.line
        for name, imports in self.tf_imports.items():
            if any(self.positions[i].start.line >= line for i in imports):
                continue  # imported below the call: may not be bound yet when it runs
            bindings = scope[name]
            if bindings and all(isinstance(b, Assignment) and b.node in imports for b in bindings):
                return name
        return None


def _tensorflow_imports(module: cst.Module) -> dict[str, list[cst.Import]]:
    """Module-level ``import tensorflow as X`` / ``import tensorflow`` statements, by the
    name they bind to the tensorflow package."""
    found: dict[str, list[cst.Import]] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.Import):
                continue
            for alias in small.names:
                dotted = cst.helpers.get_full_name_for_node(alias.name) or ""
                if alias.asname is not None:
                    if dotted == "tensorflow" and isinstance(alias.asname.name, cst.Name):
                        found.setdefault(alias.asname.name.value, []).append(small)
                elif dotted == "tensorflow":
                    found.setdefault("tensorflow", []).append(small)
    return found
