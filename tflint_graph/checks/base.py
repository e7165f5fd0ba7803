"""The base class every rule derives from.

A rule is a small libcst visitor: it defines ``visit_<NodeType>(self, node, fn)`` methods,
and the engine calls them for nodes of traced code only (``fn`` is the traced function
holding the node), in one shared traversal of the module.  A rule carries its own examples:
``VALID`` sources must give no finding of the rule, ``INVALID`` sources must give exactly the
findings marked with a trailing ``# TFGnnn`` comment.  ``tests/rules/test_rule_examples.py``
runs them all.  A rule that can rewrite what it reports declares ``FIX_SAFETY`` and overrides
``fix()``: ``report()`` asks ``fix()`` whether the finding can be rewritten and
``fix_safety()`` how safe that is, and the finding carries the answer (``Finding.fix_safety``);
``tflint_graph.output.fix`` applies the safe ones for ``--fix`` and ``--diff``, and the unsafe
ones only when asked to.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from tflint_graph.checks.fixing import FixSafety, LintSite, Site
from tflint_graph.checks.messages import shorten
from tflint_graph.core.facts import RemoteFinding
from tflint_graph.core.finding import Finding, Severity
from tflint_graph.core.paths import is_test_file
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.traced import traced_of
from tflint_graph.traced.arguments import expected_to_raise


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # stable kebab-case name, e.g. "print-in-traced"
    severity: ClassVar[Severity] = Severity.ERROR
    # False: the rule also sees module-level and eager code (``fn`` may then be None).
    traced_only: ClassVar[bool] = True
    # Identifiers that make a module worth this rule's time even when the module has no
    # traced code (``saved_model`` for an export site): the prefilter keeps a module naming
    # one of them, or a word of traced code (``core.vocabulary.TRACE_WORDS``), for the full
    # analysis, and summarises the others from CPython's tree.
    TRIGGERS: ClassVar[frozenset[str]] = frozenset()
    VALID: ClassVar[list[str]] = []
    INVALID: ClassVar[list[str]] = []
    # Set by a rule that overrides fix(): the safety of its fixes, unless fix_safety() says
    # otherwise for a finding ("safe": --fix applies them; "unsafe": only --unsafe-fixes).
    FIX_SAFETY: ClassVar[FixSafety | None] = None
    # True for rules about effects that run once per trace instead of per call (a print, a
    # list append, an attribute write), about tracing costs (retraces, a missing signature)
    # and about objects a second trace would rebuild: in a test module such an effect is
    # what the tests check (counting traces, a mock recording that it was called, a sweep of
    # two settings, a function registered before it was traced), or makes the tests that
    # run it fail by themselves, so the rule stays silent there, in tests and in the
    # doubles and helpers they use alike.
    QUIET_IN_TESTS: ClassVar[bool] = False
    # True for rules about code that raises while TensorFlow traces it: a test that traces
    # it only inside `with self.assertRaises(...)` / `pytest.raises(...)` expects the error.
    RAISES_WHILE_TRACING: ClassVar[bool] = False

    def __init__(self, ctx: ModuleContext, sink: list[Finding]) -> None:
        self.ctx = ctx
        self._sink = sink

    @classmethod
    def summary(cls) -> str:
        """First line of the class docstring: the one-line description listings show."""
        return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""

    @classmethod
    def fix(
        cls,
        node: cst.CSTNode,
        updated: cst.CSTNode,
        site: Site,
        suggestion: str | None = None,
    ) -> cst.CSTNode | cst.RemovalSentinel | None:
        """The rewrite of ``node``, the node a finding of this rule names (at fix time: the
        innermost node of a fresh parse with exactly the finding's range), or None when the
        rule has no rewrite for it.  ``suggestion`` is the finding's ``fix`` text, for a
        rewrite only the analysis could work out (TFG301's guessed signature).

        ``updated`` is ``node`` with the fixes inside it already applied: build the result
        from it, and ask ``site`` about ``node``.  The result replaces ``updated``; when
        ``node`` is the value of an expression statement, a small statement may be returned
        instead, and replaces that whole statement, or ``cst.RemovalSentinel.REMOVE``, and
        the statement is deleted (a block left empty gets ``pass``).  It is also called while
        linting (with ``updated`` the node itself): it must not depend on which site asks.
        """
        return None

    def fix_safety(self, node: cst.CSTNode, fn: TracedFunction | None) -> FixSafety:
        """How safe the fix of the finding at ``node`` is, decided with the analysis
        (``FIX_SAFETY`` unless the rule's fixes differ from finding to finding)."""
        assert self.FIX_SAFETY is not None
        return self.FIX_SAFETY

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fn: TracedFunction | None,
        *,
        fix: str | None = None,
    ) -> None:
        if self.QUIET_IN_TESTS and is_test_file(self.ctx.path):
            return
        if fn is not None and traced_of(self.ctx).arguments.ruled_out(node, fn):
            return  # `if decoder is None:` where every trace passes a decoder
        if self.RAISES_WHILE_TRACING and fn is not None and expected_to_raise(self.ctx, fn):
            return
        where = self.ctx.position(node)
        safety: FixSafety | None = None
        # A site per finding: kept by the rule or the context, it would close a cycle.
        if (
            self.FIX_SAFETY is not None
            and type(self).fix(node, node, LintSite(self.ctx), fix) is not None
        ):
            safety = self.fix_safety(node, fn)
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
                fix_safety=safety,
            )
        )

    def quote(self, node: cst.CSTNode, limit: int = 40) -> str:
        """``node``'s source on one line, shortened for a message."""
        return shorten(self.ctx.code(node), limit)

    def report_elsewhere(self, target: str, message: str, *, fix: str | None = None) -> None:
        """A finding about ``target`` (an absolute name of a function defined in another
        module of the run), reported at that function's def once the run reaches it."""
        self.ctx.remote.append(
            RemoteFinding(target, self.code, self.name, self.severity.value, message, fix)
        )


class ModuleRule(Rule):
    """A rule that judges the module as a whole (most TFG3xx/TFG4xx): ``check()`` runs once,
    after the traversal, when the traced code and the shared analyses are complete.  It
    reads ``self.ctx`` and ``self.traced``, and reports like any rule."""

    traced_only: ClassVar[bool] = False

    def check(self) -> None:
        raise NotImplementedError
