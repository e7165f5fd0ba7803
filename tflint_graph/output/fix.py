"""Automatic fixes (``--fix`` / ``--diff``): formatting-preserving libcst rewrites that the
rules propose (``Rule.fix``) and this module applies.

A fix is planned from a finding the run already reported (so ``# noqa``,
``--select``/``--ignore`` and per-file ignores have already been applied) that carries a
``fix_safety`` (the rule found a rewrite for it while linting): ``"safe"`` ones are applied,
``"unsafe"`` ones only with ``unsafe=True``.  The file is parsed again, the node whose exact
range the finding names is located, and the finding's rule rewrites it, or declines.  Only
the replaced nodes change: everything else in the module, comments and whitespace included,
keeps its bytes, and a result that does not parse is thrown away.  A Jupyter notebook is
fixed as the module its code cells make (``source.notebook``); only the changed cells'
``source`` is written back, every other byte of the file stays.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from tflint_graph.checks import ALL_RULES, Rule
from tflint_graph.checks.fixing import FixSite
from tflint_graph.core.finding import Finding
from tflint_graph.output.rewrite import FileFix, read_back
from tflint_graph.source.notebook import Notebook, is_notebook, read_notebook

__all__ = ["FIXERS", "FileFix", "fix_source", "fixable", "plan_fixes", "plan_source"]

# The rules that can rewrite what they report, by code.
FIXERS: Mapping[str, type[Rule]] = {r.code: r for r in ALL_RULES if r.FIX_SAFETY is not None}

_Span = tuple[int, int, int, int]  # line, column (1-based), end line, end column


def fixable(finding: Finding, unsafe: bool = False) -> bool:
    """``finding`` has an automatic fix that this policy applies: a safe one, or with
    ``unsafe`` an unsafe one too."""
    if finding.code not in FIXERS or finding.end_line is None or finding.end_column is None:
        return False
    return finding.fix_safety == "safe" or (unsafe and finding.fix_safety == "unsafe")


def plan_fixes(findings: Iterable[Finding], *, unsafe: bool = False) -> list[FileFix]:
    """The rewrites that would fix ``findings`` (those of a lint run), one per changed file,
    sorted by path: the safe fixes, and with ``unsafe`` the unsafe ones too.  Files that
    would not change, cannot be read back identically, or whose fixed text would not parse
    are left out."""
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        if fixable(f, unsafe):
            by_path.setdefault(f.path, []).append(f)
    return [
        plan for path, found in sorted(by_path.items()) if (plan := _plan_file(path, found, unsafe))
    ]


def plan_source(
    path: str, source: str, findings: Sequence[Finding], *, unsafe: bool = False
) -> FileFix | None:
    """The rewrite of ``source`` (text that is not a file: standard input, shown as
    ``path``) that fixes ``findings``, or None when nothing changes.  A ``.ipynb`` path's
    text is a notebook's JSON."""
    found = [f for f in findings if f.path == path and fixable(f, unsafe)]
    if not found:
        return None
    if is_notebook(path):
        return _plan_notebook(path, source.encode(), found, unsafe)
    fixed, codes = _fix_text(source, found, unsafe)
    if not codes or fixed == source:
        return None
    return FileFix(path, source, fixed, source.encode(), fixed.encode(), tuple(codes))


def _plan_file(path: str, findings: Sequence[Finding], unsafe: bool) -> FileFix | None:
    if is_notebook(path):
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        return _plan_notebook(path, data, findings, unsafe)
    read = read_back(path)
    if read is None:
        return None
    text, encode, data = read
    fixed, codes = _fix_text(text, findings, unsafe)
    if not codes or fixed == text:
        return None
    try:
        new_data = encode(fixed)
    except UnicodeError:
        return None
    return FileFix(path, text, fixed, data, new_data, tuple(codes))


def _plan_notebook(
    path: str, data: bytes, findings: Sequence[Finding], unsafe: bool
) -> FileFix | None:
    """The notebook's module fixed, and written back into the changed cells only."""
    notebook = read_notebook(data, path)
    if not isinstance(notebook, Notebook):
        return None
    located = [m for f in findings if (m := notebook.to_module(f)) is not None]
    fixed, codes = _fix_text(notebook.source, located, unsafe)
    if not codes or fixed == notebook.source:
        return None
    written = notebook.with_module(fixed)
    if written is None:
        return None
    new_data, cells = written
    return FileFix(path, notebook.source, fixed, data, new_data, tuple(codes), tuple(cells))


def fix_source(
    source: str, findings: Sequence[Finding], *, unsafe: bool = False
) -> tuple[str, int]:
    """``source`` with every fixable finding of ``findings`` (findings of this exact text)
    fixed, and how many were; ``(source, 0)`` when nothing can be fixed.  Safe fixes only,
    unless ``unsafe``."""
    fixed, codes = _fix_text(source, findings, unsafe)
    return fixed, len(codes)


def _fix_text(source: str, findings: Sequence[Finding], unsafe: bool) -> tuple[str, list[str]]:
    """``fix_source``, with the code of each finding fixed."""
    wanted: dict[_Span, dict[str, str | None]] = {}
    for f in findings:
        if fixable(f, unsafe):
            assert f.end_line is not None and f.end_column is not None
            span = (f.line, f.column, f.end_line, f.end_column)
            wanted.setdefault(span, {})[f.code] = f.fix
    if not wanted:
        return source, []  # nothing to fix: not worth a parse
    try:
        module = cst.parse_module(source)
    except Exception:
        return source, []
    if module.code != source:
        # libcst does not write back every source as it read it (a form feed before the
        # first statement is dropped): a rewrite would change more than the fixed nodes.
        return source, []
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    targets = _locate(wrapper.resolve(PositionProvider), wanted)
    if not targets:
        return source, []
    applier = _Apply(targets, FixSite(wrapper))
    fixed_module = module.visit(applier)
    if not applier.codes:
        return source, []
    fixed = fixed_module.code
    if not _reparses(fixed):  # the safety net: a fix must never leave the file unparsable
        return source, []
    return fixed, applier.codes


# A rule to offer a node to, with the suggestion of the finding it fixes.
_Target = tuple[type[Rule], str | None]


def _locate(
    positions: Mapping[cst.CSTNode, CodeRange], wanted: Mapping[_Span, Mapping[str, str | None]]
) -> dict[cst.CSTNode, list[_Target]]:
    """The node each wanted range names, with the rules to offer it to.  Wrappers can share
    a node's range (a statement and the call it consists of): the innermost node is the one
    a rule reports."""
    targets: dict[cst.CSTNode, list[_Target]] = {}
    for node, where in positions.items():
        span = (where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)
        if span in wanted and not any(positions.get(c) == where for c in node.children):
            targets[node] = [(FIXERS[code], hint) for code, hint in sorted(wanted[span].items())]
    return targets


def _reparses(source: str) -> bool:
    try:
        cst.parse_module(source)
        compile(source, "<fixed>", "exec", dont_inherit=True)
    except Exception:
        return False
    return True


class _Apply(cst.CSTTransformer):
    """Offers each located node to its rules as the traversal leaves it: inner nodes first,
    so an outer fix is built from the inner ones' results (``print(print(x))``)."""

    def __init__(self, targets: Mapping[cst.CSTNode, Sequence[_Target]], site: FixSite) -> None:
        super().__init__()
        self.targets = targets
        self.site = site
        # A fix's statement (or its removal) and its rule's code, by the expression whose
        # statement it replaces.
        self.statements: dict[
            cst.CSTNode, tuple[cst.BaseSmallStatement | cst.RemovalSentinel, str]
        ] = {}
        # Lines whose every statement a fix removed: a `pass` standing in until the block
        # around them is left (see ``_drop_emptied``).
        self.emptied: set[cst.SimpleStatementLine] = set()
        self.codes: list[str] = []  # the code of each finding fixed

    def on_leave(
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel:
        updated = updated_node
        for rule, suggestion in self.targets.get(original_node, ()):
            replacement = rule.fix(original_node, updated, self.site, suggestion)
            if isinstance(replacement, cst.BaseSmallStatement | cst.RemovalSentinel):
                self.statements[original_node] = (replacement, rule.code)
                break  # the whole statement goes: nothing left to build on
            if replacement is not None:
                updated = replacement
                self.codes.append(rule.code)
        if isinstance(original_node, cst.Expr) and isinstance(updated, cst.Expr):
            planned = self.statements.pop(original_node.value, None)
            if planned is not None:
                statement, code = planned
                self.codes.append(code)
                if isinstance(statement, cst.RemovalSentinel):
                    return statement
                return statement.with_changes(semicolon=updated.semicolon)
        if isinstance(updated, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            return self._small_statements_left(original_node, updated)
        if isinstance(updated, cst.IndentedBlock | cst.Module):
            return self._drop_emptied(updated)
        return updated

    def _small_statements_left(
        self, original: cst.CSTNode, updated: cst.SimpleStatementLine | cst.SimpleStatementSuite
    ) -> cst.CSTNode:
        assert isinstance(original, cst.SimpleStatementLine | cst.SimpleStatementSuite)
        if len(updated.body) == len(original.body):
            return updated
        if updated.body:  # `a; removed()`: no semicolon left dangling after `a`
            last = updated.body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(body=[*updated.body[:-1], last])
        placeholder = updated.with_changes(body=[cst.Pass()])
        if isinstance(placeholder, cst.SimpleStatementLine):
            self.emptied.add(placeholder)
        return placeholder  # `if flag: removed()` becomes `if flag: pass`

    def _drop_emptied(self, block: cst.IndentedBlock | cst.Module) -> cst.CSTNode:
        """``block`` without the lines fixes emptied, the comments above each kept (on the
        next statement, or the block's footer; the blank lines go with the statement);
        ``pass`` where nothing else is left."""
        if not any(s in self.emptied for s in block.body):
            return block
        body: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for statement in block.body:
            if statement in self.emptied:
                assert isinstance(statement, cst.SimpleStatementLine)
                carried += [line for line in statement.leading_lines if line.comment]
                continue
            if carried:
                statement = statement.with_changes(
                    leading_lines=[*carried, *statement.leading_lines]
                )
                carried = []
            body.append(statement)
        if not body and isinstance(block, cst.IndentedBlock):
            return block.with_changes(body=[cst.SimpleStatementLine([cst.Pass()], carried)])
        return block.with_changes(body=body, footer=[*carried, *block.footer])
