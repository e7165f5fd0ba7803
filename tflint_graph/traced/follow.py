"""From the roots to everything traced code reaches (SPEC §1): what it calls, hands to
graph control flow or passes on, breadth first so that each function keeps the shortest
chain from a root.  Bodies given to ``tf.py_function``/``tf.numpy_function`` never are."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

import libcst as cst

from tflint_graph.core.facts import ExternalRoot, TraceKind
from tflint_graph.core.vocabulary import (
    CONTROL_FLOW,
    ELSEWHERE_CALLS,
    ELSEWHERE_MODULES,
    STRATEGY_RUN,
)
from tflint_graph.model import walk
from tflint_graph.model.calls import binds_self
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.eager import TracingGuards
from tflint_graph.model.names import dotted, last_name
from tflint_graph.traced.outgoing import OutgoingCalls
from tflint_graph.traced.roots import Root

# Methods a chain names with their class (``Augmenter.__init__()``).
_NAMED_BY_CLASS = frozenset({"__init__", "__call__"})


class _InnerNodes(walk.Visitor):
    """Calls and lambdas inside an expression (used to fence off escape-hatch arguments)."""

    def __init__(self) -> None:
        self.found: set[cst.CSTNode] = set()

    def visit_Call(self, node: cst.Call) -> None:
        self.found.add(node)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.found.add(node)


class Follower:
    """Grows the module's traced functions from its roots."""

    def __init__(
        self,
        ctx: ModuleContext,
        definitions: Definitions,
        escaped: set[FunctionNode],
        outgoing: OutgoingCalls,
        guards: TracingGuards,
    ) -> None:
        self.ctx = ctx
        self.guards = guards
        self.definitions = definitions
        self.escaped = escaped
        self.outgoing = outgoing
        self.traced: dict[FunctionNode, TracedFunction] = {}
        self._order: deque[TracedFunction] = deque()

    def add(
        self,
        fn: FunctionNode,
        kind: TraceKind,
        reason: str,
        parent: TracedFunction | None = None,
        autograph: bool = True,
        signature: cst.BaseExpression | None = None,
        unconverted: str = "",
        features: frozenset[str] | None = None,
        call: cst.Call | None = None,
    ) -> None:
        """``fn`` is traced (unless it already is, or escapes tracing).  A plain function
        traced converted and reached again from code AutoGraph leaves alone (a Keras 3
        ``call``) is followed again as unconverted: its tensor ``if``s raise there.
        ``call``: the call of ``parent`` that reaches it (``TracedFunction.sites``)."""
        if fn in self.escaped:
            return
        known = self.traced.get(fn)
        sites = _sites_with(known.sites if known is not None else [], call, parent)
        if known is not None:
            known.sites = sites
        if known is not None and not (
            known.autograph and not autograph and known.kind is kind is TraceKind.CALLEE
        ):
            return
        if not autograph and not unconverted and parent is not None and not parent.autograph:
            unconverted = parent.unconverted
        display = self.display(fn)
        chain = (*parent.chain, display) if parent is not None else (display,)
        autograph = autograph and not self.definitions.no_autograph_decorator(fn)
        if features is None:  # AutoGraph converts callees with their caller's options
            features = parent.autograph_features if parent is not None else frozenset()
        info = TracedFunction(
            fn,
            display,
            kind,
            reason,
            chain,
            autograph,
            signature,
            parent,
            unconverted=unconverted,
            autograph_features=features,
            sites=sites,
        )
        self._enqueue(info)

    def add_roots(self, roots: Iterable[Root]) -> None:
        for r in roots:
            self.add(
                r.fn,
                r.kind,
                r.reason,
                autograph=r.autograph,
                signature=r.signature,
                unconverted=r.unconverted,
                features=r.features,
            )

    def add_external(self, roots: Iterable[ExternalRoot]) -> None:
        """Roots handed over by other modules of the run: ``helpers.normalize`` called from a
        traced step in train.py.  A function already traced here keeps its own reason and
        only learns about the outside caller (TFG401 wants to know)."""
        for ext in roots:
            found, further = self.definitions.external(ext.qualname)
            for target in further:
                self.outgoing.forward(target, ext)
            for fn, autograph in found:
                known = self.traced.get(fn)
                if (
                    known is not None
                    and known.autograph
                    and not ext.autograph
                    and known.kind is TraceKind.CALLEE
                ):
                    del self.traced[fn]  # followed again below, as unconverted
                if fn in self.traced:
                    if ext.chain:
                        self.traced[fn].callers_elsewhere.append(ext.chain[-1])
                    self.traced[fn].sites = None  # this module's calls no longer tell all
                    continue
                if fn in self.escaped:
                    continue
                display = self.display(fn)
                info = TracedFunction(
                    fn,
                    display,
                    ext.kind,
                    ext.reason,
                    (*ext.chain, display),
                    ext.autograph and autograph and not self.definitions.no_autograph_decorator(fn),
                    passed_elsewhere=ext.passed,
                    setup_elsewhere=ext.setup,
                    unconverted="" if ext.autograph else ext.unconverted,
                    fresh_elsewhere=ext.fresh,
                    sites=[],  # so far; what the calls elsewhere pass is ``passed_elsewhere``
                )
                self._enqueue(info)

    def _enqueue(self, info: TracedFunction) -> None:
        self.traced[info.node] = info
        self._order.append(info)

    def run(self) -> dict[FunctionNode, TracedFunction]:
        """Breadth-first over what traced code reaches, so chains are shortest."""
        while self._order:
            self._follow(self._order.popleft())
        return self.traced

    def display(self, fn: FunctionNode) -> str:
        if isinstance(fn, cst.FunctionDef):
            name = fn.name.value
            cls = self.ctx.enclosing_class(fn) if name in _NAMED_BY_CLASS else None
            # `__init__()` alone would not say which class a chain constructs.
            return f"{cls.name.value}.{name}()" if cls is not None else f"{name}()"
        return f"lambda (line {self.ctx.position(fn).start.line})"

    def _escape_arguments(self, call: cst.Call, info: TracedFunction) -> set[cst.Arg]:
        """Arguments of ``call`` that every function of this module it may call hands to an
        escape hatch as its function (``Definitions.escape_params``)."""
        definitions = self.definitions
        if not call.args or not (definitions.escape_table() or self.ctx.view.escape_params):
            return set()  # nothing of the run hands its parameters on: the common case
        targets = [
            f
            for f, _ in definitions.callables(call.func, info.node)
            if isinstance(f, cst.FunctionDef)
        ]
        if not targets:
            return self._foreign_escape_arguments(call)
        found = set()
        for arg in call.args:
            if all(
                _parameter_of(call, arg, f, binds_self(self.ctx, f, call.func))
                in definitions.escape_params(f)
                for f in targets
            ):
                found.add(arg)
        return found

    def _foreign_escape_arguments(self, call: cst.Call) -> set[cst.Arg]:
        """``_escape_arguments`` for a function of another module of the run
        (``ProjectView.escape_params``)."""
        table = self.ctx.view.escape_params
        if not table:
            return set()
        names = {self.ctx.view.absolute(n) for n in self.ctx.resolve(call.func).imported}
        entries = [table[n] for n in sorted(names) if n in table]
        if not entries:
            return set()
        found = set()
        for arg in call.args:
            for positional, escaping in entries:
                name = _position_name(call, arg, positional)
                if name is None or name not in escaping:
                    break
            else:
                found.add(arg)
        return found

    @staticmethod
    def _how(method: cst.FunctionDef, info: TracedFunction) -> str:
        if method.name.value == "__init__":
            return f"constructed in {info.display}"
        return f"called from {info.display}"

    def _from(self, info: TracedFunction) -> str:
        return f"called from {info.display} in {self.ctx.path}"

    def _handed_lambda(self, name: cst.Name) -> set[cst.CSTNode]:
        """A lambda bound to a local name (``seg = lambda y: ...``) that is only ever handed
        to ``tf.py_function`` & co. (``func=seg``) runs eagerly, like one written there: the
        lambda and the calls in it."""
        found: set[cst.CSTNode] = set()
        for a in self.ctx.bindings(name):
            value = self.definitions.assigned_value(a.node) if type(a.node) is cst.Name else None
            if type(value) is not cst.Lambda:
                return set()
            if not a.references or any(not self._hatch_argument(ref.node) for ref in a.references):
                return set()
            found |= _never_traced(value)
        return found

    def _hatch_argument(self, node: cst.CSTNode) -> bool:
        arg = self.ctx.parent(node)
        call = self.ctx.parent(arg) if type(arg) is cst.Arg else None
        return type(call) is cst.Call and self.definitions.is_escape_hatch(call.func)

    def _follow(self, info: TracedFunction) -> None:
        definitions = self.definitions
        facts = definitions.facts.bodies.get(info.node)
        if facts is None:
            return
        # Everything inside the arguments of tf.py_function & co. runs eagerly: calls there
        # (`functools.partial(fn, k)`) and lambdas there are not traced.
        fenced: set[cst.CSTNode] = set()
        handed: set[cst.CSTNode] = set()
        for call in facts.calls:
            if definitions.is_escape_hatch(call.func):
                inner = _InnerNodes()
                for arg in call.args:
                    inner.walk(arg.value)
                    if type(arg.value) is cst.Name:
                        handed.add(arg.value)
                fenced |= inner.found
        for name in handed:
            fenced |= self._handed_lambda(name)
        for call in facts.calls:
            if call in fenced or self.guards.untraced(call, info.node):
                continue
            func = call.func
            if definitions.is_escape_hatch(func):
                continue
            res = definitions.resolve(func)
            label = None
            if not res.imported.isdisjoint(CONTROL_FLOW):  # rare: spare most calls the scan
                label = next((v for k, v in CONTROL_FLOW.items() if res.is_(k)), None)
            if (
                label is None
                and isinstance(func, cst.Attribute)
                and func.attr.value in STRATEGY_RUN
                and definitions.is_strategy(func.value)
            ):
                label = "strategy.run"
            if label is not None:
                for arg in call.args:
                    for fn, autograph in definitions.callables(arg.value, info.node):
                        self.add(
                            fn,
                            TraceKind.CONTROL_FLOW,
                            f"{label} callable in {info.display}",
                            info,
                            autograph and info.autograph,
                        )
                    self.outgoing.send(
                        arg.value,
                        TraceKind.CONTROL_FLOW,
                        f"{label} callable in {info.display} ({self.ctx.path})",
                        info,
                        info.autograph,
                    )
                continue
            local = False
            for fn, _ in definitions.callables(func, info.node):
                local = True
                self.add(
                    fn, TraceKind.CALLEE, f"called from {info.display}", info, info.autograph,
                    call=call,
                )  # fmt: skip
            if not local:
                # A class constructed here runs its `__init__`, an instance called its
                # `__call__`, while tracing.
                for method in definitions.entered(call, info.node):
                    local = True
                    how = self._how(method, info)
                    self.add(method, TraceKind.CALLEE, how, info, info.autograph)
            if not local:
                self.outgoing.send(
                    func, TraceKind.CALLEE, self._from(info), info, info.autograph, call=call
                )
                for target in definitions.foreign_methods(call, info.node):
                    method = target.rpartition(".")[2]
                    fresh = definitions.fresh_receiver(
                        call, method, info.node, definitions.self_is_fresh(info)
                    )
                    self.outgoing.add(target, TraceKind.CALLEE, self._from(info), info, call, fresh)
            name = dotted(func) or "a call"
            if _runs_elsewhere(func, res.imported):
                continue  # `Process(target=check)`: another process or thread runs it
            escaping = self._escape_arguments(call, info)
            for arg in call.args:
                if isinstance(arg.value, cst.Lambda):
                    continue  # handled with the other lambdas below
                if arg in escaping:
                    continue  # `run_eagerly(decode, x)` hands it to tf.numpy_function
                for fn, _ in definitions.callables(arg.value, info.node):
                    if isinstance(fn, cst.FunctionDef):
                        self.add(
                            fn,
                            TraceKind.CALLEE,
                            f"passed to {name}() in {info.display}",
                            info,
                            info.autograph,
                        )
        for lam in facts.lambdas:
            if lam not in fenced and not self.guards.untraced(lam, info.node):
                self.add(lam, TraceKind.CALLEE, f"lambda in {info.display}", info, info.autograph)


def _sites_with(
    sites: list[tuple[cst.Call, TracedFunction]] | None,
    call: cst.Call | None,
    parent: TracedFunction | None,
) -> list[tuple[cst.Call, TracedFunction]] | None:
    """``sites`` and one more way in: a call from ``parent``, or (None) another way, after
    which the calls no longer tell everything the function receives."""
    if sites is None or call is None or parent is None:
        return None
    return [*sites, (call, parent)]


def _never_traced(lam: cst.Lambda) -> set[cst.CSTNode]:
    inner = _InnerNodes()
    inner.walk(lam)
    return inner.found


def _parameter_of(call: cst.Call, arg: cst.Arg, fn: cst.FunctionDef, bound: bool) -> str | None:
    """The parameter of ``fn`` that ``arg`` of ``call`` fills, if the call says."""
    params = [*fn.params.posonly_params, *fn.params.params][1 if bound else 0 :]
    return _position_name(call, arg, tuple(p.name.value for p in params))


def _position_name(call: cst.Call, arg: cst.Arg, positional: tuple[str, ...]) -> str | None:
    """The parameter that ``arg`` fills, given the positional names callers fill."""
    if arg.keyword is not None:
        return arg.keyword.value
    index = 0
    for a in call.args:
        if a.star:
            return None  # positions unknown from here on
        if a is arg:
            return positional[index] if index < len(positional) else None
        if a.keyword is None:
            index += 1
    return None


def _runs_elsewhere(func: cst.BaseExpression, imported: Iterable[str]) -> bool:
    """``func`` hands the callables it is given to another process or thread, or runs them
    later: they are no part of this trace."""
    last = last_name(func)
    return last in ELSEWHERE_CALLS or any(n.startswith(ELSEWHERE_MODULES) for n in imported)
