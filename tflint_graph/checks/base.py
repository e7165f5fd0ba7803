"""The base class every rule derives from.

A rule is a small libcst visitor: it defines ``visit_<NodeType>(self, node, fn)`` methods,
and the engine calls them for nodes of traced code only (``fn`` is the traced function
holding the node), in one shared traversal of the module.  A rule carries its own examples:
``VALID`` sources must give no finding of the rule, ``INVALID`` sources must give exactly the
findings marked with a trailing ``# TFGnnn`` comment.  ``tests/rules/test_rule_examples.py`` runs
them all.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from tflint_graph.core.facts import RemoteFinding
from tflint_graph.core.finding import Finding, Severity
from tflint_graph.model.context import ModuleContext, TracedFunction


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # stable kebab-case name, e.g. "print-in-traced"
    severity: ClassVar[Severity] = Severity.ERROR
    # False: the rule also sees module-level and eager code (``fn`` may then be None).
    traced_only: ClassVar[bool] = True
    VALID: ClassVar[list[str]] = []
    INVALID: ClassVar[list[str]] = []

    def __init__(self, ctx: ModuleContext, sink: list[Finding]) -> None:
        self.ctx = ctx
        self._sink = sink

    @classmethod
    def summary(cls) -> str:
        """First line of the class docstring: the one-line description listings show."""
        return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fn: TracedFunction | None,
        *,
        fix: str | None = None,
    ) -> None:
        where = self.ctx.position(node)
        self._sink.append(
            Finding(
                path=self.ctx.path,
                line=where.start.line,
                column=where.start.column + 1,
                code=self.code,
                name=self.name,
                message=message,
                severity=self.severity,
                context=fn.reason if fn is not None else None,
                chain=fn.chain if fn is not None else (),
                fix=fix,
                end_line=where.end.line,
                end_column=where.end.column + 1,
            )
        )

    def report_elsewhere(self, target: str, message: str, *, fix: str | None = None) -> None:
        """A finding about ``target`` (an absolute name of a function defined in another
        module of the run), reported at that function's def once the run reaches it."""
        self.ctx.remote.append(
            RemoteFinding(target, self.code, self.name, self.severity.value, message, fix)
        )
