"""Runs the rules over one parsed module: traced-code discovery, then every rule in one
walk of the tree (the libcst side of the analysis; ``run.module`` imports it on first use)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable, Sequence

import libcst as cst

from tflint_graph.checks import ALL_RULES, ModuleRule, Rule
from tflint_graph.core.config import Config
from tflint_graph.core.facts import ModuleSummary, ProjectView
from tflint_graph.core.finding import Finding, Severity, tool_finding
from tflint_graph.model import walk
from tflint_graph.model.context import ModuleContext, Prepared, TracedFunction
from tflint_graph.model.eager import TracingGuards
from tflint_graph.model.values import is_init_scope
from tflint_graph.run.summary import summarize
from tflint_graph.source import prefilter
from tflint_graph.traced import find_traced, traced_of


class Dispatcher:
    """Hands each node to the rules: ``visit_<Node>(node, fn)`` with ``fn`` the traced
    function whose body holds the node (None outside traced code; decorators, defaults and
    annotations of a def belong to the code around it).

    Rules with ``traced_only`` (most) see traced bodies only, so only those are walked for
    them; the others see their node types wherever they are, found in the tree's index
    instead of a walk of the whole module.
    """

    def __init__(self, ctx: ModuleContext, rules: Sequence[Rule]) -> None:
        self.ctx = ctx
        self.fn: TracedFunction | None = None
        self.guards: TracingGuards = traced_of(ctx).guards
        self.traced: dict[str, list[Callable[..., None]]] = {}
        self.anywhere: dict[str, list[Callable[..., None]]] = {}
        for rule in rules:
            table = self.traced if rule.traced_only else self.anywhere
            for attr in _visit_methods(type(rule)):
                table.setdefault(attr[6:], []).append(getattr(rule, attr))
        self.handlers: dict[type, list[Callable[..., None]]] = {}
        self.module_rules = [rule for rule in rules if isinstance(rule, ModuleRule)]

    def run(self, module: cst.Module) -> None:
        ctx = self.ctx
        order = ctx.source_order
        # Rules that look everywhere, node by node in source order; never inside the type
        # parameters of a def (``def f[T: bound]()``), which no rule is given.
        kinds = set(self.anywhere)
        everything = ctx.nodes_in_order()
        hidden = {
            id(below)
            for n in everything
            if type(n) is cst.FunctionDef and n.type_parameters is not None  # type: ignore[attr-defined]
            for below in (n.type_parameters, *walk.descendants(n.type_parameters))  # type: ignore[attr-defined]
        }
        nodes = [n for n in everything if type(n).__name__ in kinds and id(n) not in hidden]
        for node in nodes:
            fn = ctx.enclosing_function(node) if node is not module else None
            info = ctx.traced.get(fn) if fn is not None else None
            for handler in self.anywhere[type(node).__name__]:
                handler(node, info)
        # Traced bodies, each once (a traced function nested in another has its own entry).
        if self.traced:
            for node, info in sorted(ctx.traced.items(), key=lambda item: order(item[0])):
                self.fn = info
                self.walk(node.body)
            self.fn = None
        # Whole-module rules, once the traversal is over.
        for rule in self.module_rules:
            rule.check()

    def walk(self, node: cst.CSTNode) -> None:
        kind = type(node)
        handlers = self.handlers.get(kind)
        if handlers is None:
            handlers = self.handlers[kind] = self.traced.get(kind.__name__, [])
        fn = self.fn
        for handler in handlers:
            handler(node, fn)
        if kind is cst.FunctionDef:
            # Decorators, defaults and annotations run in the enclosing scope; the body is
            # walked as its own traced function, or not at all.
            for dec in node.decorators:  # type: ignore[attr-defined]
                self.walk(dec)
            self.walk(node.params)  # type: ignore[attr-defined]
            if node.returns is not None:  # type: ignore[attr-defined]
                self.walk(node.returns)  # type: ignore[attr-defined]
        elif kind is cst.Lambda:
            self.walk(node.params)  # type: ignore[attr-defined]
        elif kind is cst.If or kind is cst.IfExp:
            # A branch that never runs while tracing (`if tf.executing_eagerly():`) is no
            # traced code (``model.eager``).
            skipped = self.guards.skipped_branch(node)  # type: ignore[arg-type]
            for child in walk.children(node):
                if child is not skipped:
                    self.walk(child)
        elif kind is cst.IndentedBlock:
            for child in walk.children(node):
                self.walk(child)
                if type(child) in _MAY_EXIT and self.guards.exits_while_tracing(child):  # type: ignore[arg-type]
                    break  # what follows runs eagerly only, or never
        elif kind is cst.With and is_init_scope(self.ctx, node):  # type: ignore[arg-type]
            for item in node.items:  # type: ignore[attr-defined]
                self.walk(item)  # its body runs eagerly
        else:
            for child in walk.children(node):
                self.walk(child)


_MAY_EXIT = (cst.If, cst.SimpleStatementLine)


@functools.cache
def _visit_methods(rule: type[Rule]) -> tuple[str, ...]:
    """A rule class's ``visit_<Node>`` names, in ``dir`` order: looked up once per class,
    not once per analysis (``dir`` was a few percent of a Keras-heavy run)."""
    return tuple(attr for attr in dir(rule) if attr.startswith("visit_"))


def enabled_rules(config: Config, path: str) -> list[type[Rule]]:
    """The rules that run on ``path`` (selection and per-file ignores applied)."""
    return [r for r in ALL_RULES if config.is_enabled(r.code, path)]


def trigger_words(rules: Iterable[type[Rule]]) -> frozenset[str]:
    """The words ``rules`` need the prefilter to keep (``Rule.TRIGGERS``)."""
    return frozenset(word for rule in rules for word in rule.TRIGGERS)


def rule_triggers(config: Config, path: str) -> frozenset[str]:
    """The words the rules enabled for ``path`` need the prefilter to keep."""
    return trigger_words(enabled_rules(config, path))


def run_rules(
    module: cst.Module,
    source: str,
    path: str,
    config: Config,
    view: ProjectView,
    python_tree: ast.Module | None = None,
    prepared: Prepared | None = None,
    keep: bool = False,
    rules: Sequence[type[Rule]] | None = None,
    scan: prefilter.Scan | None = None,
) -> tuple[list[Finding], ModuleSummary | None, Prepared | None]:
    """Findings and summary of ``module``, and (with ``keep``) what the analysis prepared
    from the tree alone, for the next analysis of the same tree (``prepared``).  ``rules``
    are the rules enabled for ``path`` when the caller looked them up already; ``scan`` the
    prefilter's walk of ``python_tree``, when it made one."""
    too_deep = [tool_finding(path, "TFG001", "syntax error: too deeply nested to analyse")]
    ctx: ModuleContext | None = None
    kept: Prepared | None = None
    done = False
    try:
        ctx = ModuleContext(path, source, module, config, view, prepared)
        ctx.python_tree = python_tree
        ctx.traced = find_traced(ctx)
        rules_enabled = enabled_rules(config, path) if rules is None else rules
        findings: list[Finding] = []
        if ctx.traced or not all(r.traced_only for r in rules_enabled):
            rules = [r(ctx, findings) for r in rules_enabled]
            Dispatcher(ctx, rules).run(module)
        findings += _remote_findings(ctx)
        # After the rules: they may have judged other modules' functions (ctx.remote).
        summary = summarize(ctx, scan)
        done = True
    except RecursionError:
        return too_deep, None, None
    finally:
        if ctx is not None:
            kept = ctx.release(keep_prepared=keep and done)
    return findings, summary, kept


def _remote_findings(ctx: ModuleContext) -> list[Finding]:
    """Findings other modules of the run made about this module's functions, at the def."""
    found: list[Finding] = []
    traced = traced_of(ctx)
    for fact in ctx.view.remote:
        for fn, _ in traced.defined(fact.target):
            if not isinstance(fn, cst.FunctionDef):
                continue
            where = ctx.position(fn)
            info = ctx.traced.get(fn)
            found.append(
                Finding(
                    path=ctx.path,
                    line=where.start.line,
                    column=where.start.column + 1,
                    code=fact.code,
                    name=fact.name,
                    message=fact.message,
                    severity=Severity(fact.severity),
                    context=info.reason if info is not None else None,
                    chain=info.chain if info is not None else (),
                    fix=fact.fix,
                )
            )
    return found
