"""Automatic fixes (``--fix`` / ``--diff``): formatting-preserving libcst rewrites that the
rules propose (``Rule.fix``) and this module applies, and the policy of which apply: a fix
the rule calls safe (``Rule.fix_safety``) always, an unsafe one only when asked for
(``--unsafe-fixes``).

A fix is planned from a finding the run already reported (so ``# noqa``,
``--select``/``--ignore`` and per-file ignores have already been applied): the file is parsed
again, the node whose exact range the finding names is located, and the finding's rule
rewrites it, or declines when the rewrite would not be provably equivalent.  Only the
replaced nodes change: everything else in the module, comments and whitespace included,
keeps its bytes, and a result that does not parse is thrown away.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from tflint_graph.checks import ALL_RULES, Rule
from tflint_graph.checks.fixing import FixSafety, FixSite
from tflint_graph.core.finding import Finding
from tflint_graph.output.rewrite import FileFix, read_back

__all__ = ["FIXERS", "FileFix", "fix_source", "offered_fixes", "plan_fixes", "plan_source"]

# The rules that can fix what they report, by code; each one's fix_safety() says, node by
# node, whether --fix applies the fix ("safe") or only --fix --unsafe-fixes does ("unsafe").
FIXERS: Mapping[str, type[Rule]] = {r.code: r for r in ALL_RULES if r.FIX_SAFETY is not None}

_Span = tuple[int, int, int, int]  # line, column (1-based), end line, end column


def plan_fixes(findings: Iterable[Finding], *, unsafe: bool = False) -> list[FileFix]:
    """The rewrites that would fix ``findings`` (those of a lint run), one per changed file,
    sorted by path: safe fixes, and unsafe ones too when ``unsafe``.  Files that would not
    change, cannot be read back identically, or whose fixed text would not parse are left
    out."""
    plans = [
        plan
        for path, found in sorted(_fixable_by_path(findings).items())
        if (plan := _plan_file(path, found, unsafe))
    ]
    return plans


def plan_source(
    path: str, source: str, findings: Sequence[Finding], *, unsafe: bool = False
) -> FileFix | None:
    """The rewrite of ``source`` (text that is not a file: standard input) that fixes
    ``findings``, or None when nothing changes."""
    fixed, codes = _fix_text(source, findings, unsafe)
    if not codes or fixed == source:
        return None
    return FileFix(path, source, fixed, source.encode(), fixed.encode(), tuple(codes))


def _fixable_by_path(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        if f.code in FIXERS and f.end_line is not None and f.end_column is not None:
            by_path.setdefault(f.path, []).append(f)
    return by_path


def _plan_file(path: str, findings: Sequence[Finding], unsafe: bool) -> FileFix | None:
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


def fix_source(
    source: str, findings: Sequence[Finding], *, unsafe: bool = False
) -> tuple[str, int]:
    """``source`` with every fixable finding of ``findings`` (findings of this exact text)
    fixed, and how many were; ``(source, 0)`` when nothing can be fixed.  Unsafe fixes are
    applied only when ``unsafe``."""
    fixed, codes = _fix_text(source, findings, unsafe)
    return fixed, len(codes)


@dataclass(frozen=True)
class _Prepared:
    """A fresh parse of a source to fix, and the nodes the findings name in it."""

    module: cst.Module
    site: FixSite
    positions: Mapping[cst.CSTNode, CodeRange]
    targets: dict[cst.CSTNode, list[type[Rule]]]


def _prepare(source: str, findings: Iterable[Finding]) -> _Prepared | None:
    """``source`` parsed for fixing; None when nothing can be fixed in it."""
    wanted: dict[_Span, set[str]] = {}
    for f in findings:
        if f.code in FIXERS and f.end_line is not None and f.end_column is not None:
            wanted.setdefault(_span(f), set()).add(f.code)
    if not wanted:
        return None  # no rule could fix any of them: not worth a parse
    try:
        module = cst.parse_module(source)
    except Exception:
        return None
    if module.code != source:
        # libcst does not write back every source as it read it (a form feed before the
        # first statement is dropped): a rewrite would change more than the fixed nodes.
        return None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    targets = _locate(positions, wanted)
    if not targets:
        return None
    return _Prepared(module, FixSite(wrapper), positions, targets)


def _span(f: Finding) -> _Span:
    return (f.line, f.column, f.end_line or f.line, f.end_column or f.column)


def _fix_text(source: str, findings: Sequence[Finding], unsafe: bool) -> tuple[str, list[str]]:
    prepared = _prepare(source, findings)
    if prepared is None:
        return source, []
    applier = _Apply(prepared.targets, prepared.site, ("safe", "unsafe") if unsafe else ("safe",))
    fixed_module = prepared.module.visit(applier)
    if not applier.codes:
        return source, []
    fixed = fixed_module.code
    if not _reparses(fixed):  # the safety net: a fix must never leave the file unparsable
        return source, []
    return fixed, applier.codes


def offered_fixes(source: str, findings: Sequence[Finding]) -> dict[Finding, FixSafety]:
    """Each of ``findings`` (findings of this exact text) whose rule offers a fix for its
    node, with the fix's safety (``output.fixable`` asks, and remembers the answer)."""
    prepared = _prepare(source, findings)
    if prepared is None:
        return {}
    site = prepared.site
    offered: dict[tuple[_Span, str], FixSafety] = {}
    for node, rules in prepared.targets.items():
        where = prepared.positions[node]
        span = (where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)
        for rule in rules:
            safety = rule.fix_safety(node, site)
            # Asked of the node as it is: a fix inside it would only change what it builds on.
            if safety is not None and rule.fix(node, node, site) is not None:
                offered[(span, rule.code)] = safety
    return {f: offered[key] for f in findings if (key := (_span(f), f.code)) in offered}


def _locate(
    positions: Mapping[cst.CSTNode, CodeRange], wanted: Mapping[_Span, set[str]]
) -> dict[cst.CSTNode, list[type[Rule]]]:
    """The node each wanted range names, with the rules to offer it to.  Wrappers can share
    a node's range (a statement and the call it consists of): the innermost node is the one
    a rule reports."""
    targets: dict[cst.CSTNode, list[type[Rule]]] = {}
    for node, where in positions.items():
        span = (where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)
        if span in wanted and not any(positions.get(c) == where for c in node.children):
            targets[node] = [FIXERS[code] for code in sorted(wanted[span])]
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
    so an outer fix is built from the inner ones' results (``print(print(x))``).  Only fixes
    whose safety is in ``applied`` are made."""

    def __init__(
        self,
        targets: Mapping[cst.CSTNode, Sequence[type[Rule]]],
        site: FixSite,
        applied: Collection[FixSafety],
    ) -> None:
        super().__init__()
        self.targets = targets
        self.site = site
        self.applied = applied
        # A fix's statement and its rule's code, by the expression whose statement it replaces.
        self.statements: dict[cst.CSTNode, tuple[cst.BaseSmallStatement, str]] = {}
        self.codes: list[str] = []

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:
        updated = updated_node
        for rule in self.targets.get(original_node, ()):
            if rule.fix_safety(original_node, self.site) not in self.applied:
                continue  # proposed at most
            replacement = rule.fix(original_node, updated, self.site)
            if isinstance(replacement, cst.BaseSmallStatement):
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
                return statement.with_changes(semicolon=updated.semicolon)
        return updated
