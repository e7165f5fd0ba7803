"""Branches that the arguments of every trace rule out (SPEC §1, "Not traced, though inside a
traced body").

An optional parameter tested for ``None`` (``if transition_params is None:``, ``if not
decoder:``) takes what the traced callers pass.  When every traced call of the function
passes something that is not ``None`` — an attribute, a call's result, a name bound to one —
the fallback branch never runs while tracing on any chain the analysis knows, and a finding
there would describe code that does not run.  A root of the trace (a ``tf.function``, a
Keras method, a ``Dataset.map`` callback) is called by TensorFlow, Keras or the user: its
optional parameters may be left out, unless the module binds them for every use
(``functools.partial(load, decoder=decoder)``).  Anything not known keeps the branch.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from tflint_graph.model.calls import (
    argument_keys,
    binds_self,
    gets_instance,
    keyword,
    partial_of,
    passed_for,
)
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.names import dotted
from tflint_graph.model.scopes import GlobalScope
from tflint_graph.model.state import one_literal
from tflint_graph.model.values import (
    assigned_value,
    attributes_by_name,
    conjuncts,
    is_container_literal,
    mentions,
    names_a_class,
    sole_parameter,
)

_MAX_DEPTH = 3


class ArgumentGuards:
    """Which ``if`` branches of traced functions the passed arguments rule out."""

    def __init__(self, definitions: Definitions) -> None:
        self.definitions = definitions
        self.ctx: ModuleContext = definitions.ctx
        self._params: dict[tuple[FunctionNode, cst.Param], bool | None] = {}

    @property
    def traced(self) -> Mapping[FunctionNode, TracedFunction]:
        # Through the context, which forgets it on release: no cycle with the traced code.
        return self.ctx.traced

    def ruled_out(self, node: cst.CSTNode, fn: TracedFunction, depth: int = 0) -> bool:
        """``node`` lies in a branch of ``fn`` that no trace takes, by what is passed, or
        ``fn`` is reached only from such branches of its traced callers."""
        child = node
        for anc in self.ctx.ancestors(node):
            if anc is fn.node:
                break
            if (
                isinstance(anc, cst.If | cst.IfExp)
                and child is not anc.test
                and self._dead_branch(anc, fn.node) is child
            ):
                return True
            child = anc
        return depth < _MAX_DEPTH and self._reached_only_from_dead_branches(fn, depth)

    def _reached_only_from_dead_branches(self, fn: TracedFunction, depth: int) -> bool:
        """Every mention of callee ``fn`` in traced code lies in a branch those traces rule
        out (``stft = tf_stft if use_tf else np_stft`` where every call passes
        ``use_tf=True``)."""
        node = fn.node
        if (
            fn.kind is not TraceKind.CALLEE
            or fn.parent is None
            or fn.callers_elsewhere
            or not isinstance(node, cst.FunctionDef)
            or self.ctx.enclosing_class(node) is not None
        ):
            return False
        found = [
            (use, caller)
            for use in mentions(self.ctx, node)
            if (caller := self.traced.get(self.ctx.enclosing_function(use))) is not None
        ]
        return bool(found) and all(self.ruled_out(use, caller, depth + 1) for use, caller in found)

    def _dead_branch(self, node: cst.If | cst.IfExp, fn: FunctionNode) -> cst.CSTNode | None:
        """The part of ``node`` no trace runs: its body when a test of ``and`` chain is False
        on every trace, its else when the whole test is True on every trace."""
        truth = self._literal_test(node.test, fn)
        if truth is not None:
            return node.orelse if truth else node.body
        if isinstance(node, cst.IfExp):
            return None
        tests = conjuncts(node.test)
        for conjunct in tests:
            found = self._aliased_test(conjunct, fn) or _optional_test(conjunct)
            if found is None:
                continue
            name, runs_when_missing = found
            param = self._optional_param(name, fn, node, runs_when_missing)
            if param is None:
                continue
            if runs_when_missing:
                # `if p is None:` where every trace passes something: a dead fallback.
                if self._may_be_missing(fn, param, 0) is False:
                    return node.body
                if len(tests) == 1 and self._always_missing(fn, param):
                    return node.orelse
            else:
                # `if p and ...:` where no trace passes it: dead too.
                if self._always_missing(fn, param):
                    return node.body
                if len(tests) == 1 and self._may_be_missing(fn, param, 0) is False:
                    return node.orelse
        return None

    def _aliased_test(
        self, test: cst.BaseExpression, fn: FunctionNode
    ) -> tuple[cst.Name, bool] | None:
        """``use_bn`` (or ``not use_bn``) where ``fn`` binds ``use_bn = bn_params is not None``
        once: the test on the parameter it names."""
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        alias = test.expression if negated else test  # type: ignore[attr-defined]
        if not isinstance(alias, cst.Name):
            return None
        found = self.ctx.bindings(alias)
        if len(found) != 1 or not isinstance(found[0].node, cst.Name):
            return None
        value = assigned_value(self.ctx, found[0].node, with_items=False)
        if not isinstance(value, cst.Comparison) or self.ctx.enclosing_function(value) is not fn:
            return None
        inner = _optional_test(value)  # `p is None` / `p is not None`
        return None if inner is None else (inner[0], inner[1] != negated)

    # -- literal settings --------------------------------------------------------------
    def _literal_test(self, test: cst.BaseExpression, fn: FunctionNode) -> bool | None:
        """``if use_tf:`` / ``if not use_tf:`` on a parameter of ``fn`` (never rebound) that
        every traced call passes the same literal truth (``use_tf=True``)."""
        negate = False
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negate = test.expression, not negate
        if not isinstance(test, cst.Name):
            return None
        param = self._sole_parameter(test, fn)
        if param is None:
            return None
        truth = self._literal_truth(fn, param, 0)
        return None if truth is None else truth != negate

    def _sole_parameter(self, name: cst.Name, fn: FunctionNode) -> cst.Param | None:
        """The parameter of ``fn`` that ``name`` is, when that is its only binding."""
        param = sole_parameter(self.ctx, name)
        return param if param is not None and param in _parameters(fn) else None

    def _literal_truth(self, fn: FunctionNode, param: cst.Param, depth: int) -> bool | None:
        """The truth of the literal every traced call of callee ``fn`` (all in this module)
        passes ``param`` (its default when left out); None when not one known truth."""
        info = self.traced.get(fn)
        if info is not None and info.kind is TraceKind.CALLEE and info.parent is None:
            return self._truth_elsewhere(info, param)  # traced from other modules only
        if info is not None and info.kind in (TraceKind.DECORATED, TraceKind.WRAPPED):
            return self._default_truth(fn, param)
        if (
            info is None
            or info.kind is not TraceKind.CALLEE
            or info.parent is None
            or info.callers_elsewhere
            or depth > _MAX_DEPTH
        ):
            return None
        truths = {
            self._truth_of(passed, caller, depth) if passed is not None else None
            for caller, passed in self._passed_here(fn, param)
        }
        if len(truths) != 1:
            return None
        return truths.pop()

    def truth(self, value: cst.BaseExpression, caller: TracedFunction) -> bool | None:
        """The truth of ``value`` on every trace of ``caller`` (a literal, or a parameter
        every trace passes one): what a call into another module tells it."""
        return self._truth_of(value, caller.node, 1)

    def _truth_elsewhere(self, info: TracedFunction, param: cst.Param) -> bool | None:
        """The one truth every call from other modules' traced code gives ``param`` (its
        literal default where a call leaves it out); None when not one known truth."""
        passed = info.passed_elsewhere
        fn = info.node
        if not passed or not isinstance(fn, cst.FunctionDef):
            return None
        bound = gets_instance(self.ctx, fn)
        keys = argument_keys(fn, param, bound)
        truths: set[bool | None] = set()
        for call in passed:
            if any(f"given:{k}" in call for k in keys):
                truths.add(
                    True
                    if any(f"true:{k}" in call for k in keys)
                    else False
                    if any(f"false:{k}" in call for k in keys)
                    else None
                )
            else:
                default = param.default
                truths.add(None if default is None else self._truth_of(default, fn, _MAX_DEPTH))
        return truths.pop() if len(truths) == 1 else None

    def _default_truth(self, fn: FunctionNode, param: cst.Param) -> bool | None:
        """A ``tf.function``'s switch (``verbose=False``): the truth of its literal default
        when no call of the function in the module passes it something else (a call through
        a name the analysis cannot follow is taken to leave it out, as calls usually do)."""
        default = param.default
        if default is None or not isinstance(fn, cst.FunctionDef):
            return None
        truth = self._truth_of(default, fn, _MAX_DEPTH)
        if truth is None:
            return None
        bound = gets_instance(self.ctx, fn)
        # A method is called through an attribute (`self.process(x, do_aug)`), which names
        # no binding: every call of an attribute of its name counts.
        uses: list[cst.CSTNode] = (
            list(attributes_by_name(self.ctx).get(fn.name.value, []))
            if bound
            else list(mentions(self.ctx, fn))
        )
        for use in uses:
            call = self.ctx.parent(use)
            if not (isinstance(call, cst.Call) and call.func is use):
                continue
            if bound and self._calls_another(call, fn):
                continue  # `Writer().process(...)`: a method of another class
            if any(a.star for a in call.args):
                return None
            passed = passed_for(call, fn.params, param, bound=bound)
            if passed is not None and passed is not default:
                at = self.ctx.enclosing_function(call) or fn  # a module-level call
                if self._truth_of(passed, at, _MAX_DEPTH) is not truth:
                    return None
        return truth

    def _calls_another(self, call: cst.Call, fn: FunctionNode) -> bool:
        """``call`` resolves to functions of the module, none of which is ``fn``."""
        at = self.ctx.enclosing_function(call) or fn
        found = [f for f, _ in self.definitions.callables(call.func, at)]
        return bool(found) and fn not in found

    def traced_callers(self, fn: FunctionNode) -> list[tuple[TracedFunction, cst.Call]]:
        """Every call of ``fn`` from traced code of this module, with its traced caller."""
        return [
            (info, call)
            for caller, info in self.traced.items()
            for call in self.definitions.calls_in(caller, fn)
        ]

    def _passed_here(
        self, fn: FunctionNode, param: cst.Param
    ) -> list[tuple[FunctionNode, cst.BaseExpression | None]]:
        """What each traced call of ``fn`` in this module gives ``param`` (its default when
        left out; None when the call's arguments cannot tell), with the calling function."""
        return [
            (
                caller,
                passed_for(call, fn.params, param, bound=binds_self(self.ctx, fn, call.func)),
            )
            for caller in self.traced
            for call in self.definitions.calls_in(caller, fn)
        ]

    def _truth_of(self, value: cst.BaseExpression, at: FunctionNode, depth: int) -> bool | None:
        if isinstance(value, cst.Name):
            if value.value in ("True", "False", "None"):
                return value.value == "True"
            param = self._sole_parameter(value, at)
            return None if param is None else self._literal_truth(at, param, depth + 1)
        if isinstance(value, cst.Integer):
            return value.value != "0"
        if isinstance(value, cst.SimpleString):
            return bool(value.evaluated_value)
        if isinstance(value, cst.Attribute) and dotted(value.value) == "self":
            # `self.knn` that every write in the module sets to `False`: a switch never on
            literal = one_literal(self.ctx, value.attr.value)
            return None if literal is None else self._truth_of(literal, at, depth)
        return None

    def _always_missing(self, fn: FunctionNode, param: cst.Param) -> bool:
        """Every traced call of callee ``fn`` (all in this module) leaves ``param`` out or
        passes None (or a falsy literal)."""
        info = self.traced.get(fn)
        if info is None or info.kind is not TraceKind.CALLEE or info.parent is None:
            return False
        if info.callers_elsewhere:
            return False
        sites = self._passed_here(fn, param)
        return bool(sites) and all(
            passed is not None and _falsy_literal(passed) for _, passed in sites
        )

    def _optional_param(
        self, name: cst.Name, fn: FunctionNode, test: cst.If, runs_when_missing: bool
    ) -> cst.Param | None:
        """The parameter of ``fn`` that ``name`` is, with default ``None``, and rebound in
        ``fn`` only in the fallback branch (``if p is None: p = make()``) or after the ``if``
        outside any loop around it (``p = tf.cast(p, dtype)``): the test sees the argument."""
        ctx = self.ctx
        found = ctx.bindings(name)
        params_found = [a.node for a in found if isinstance(a.node, cst.Param)]
        if len(params_found) != 1:
            return None
        in_loop = any(isinstance(anc, cst.For | cst.While) for anc in _up_to(ctx, test, fn))
        after = ctx.source_order(test)
        for a in found:
            node = a.node
            if node is params_found[0]:
                continue
            inside = [anc for anc in ctx.ancestors(node) if anc is test.body or anc is test]
            if runs_when_missing and inside and inside[0] is test.body:
                continue
            if not inside and not in_loop and ctx.source_order(node) > after:
                continue
            return None
        param = params_found[0]
        if param not in _parameters(fn):
            return None
        default = param.default
        return param if isinstance(default, cst.Name) and default.value == "None" else None

    # -- what a parameter receives ------------------------------------------------------
    def _may_be_missing(self, fn: FunctionNode, param: cst.Param, depth: int) -> bool | None:
        """True when some trace may give ``param`` None (or a falsy literal), False when no
        known trace does, None when the callers are not all known."""
        key = (fn, param)
        if key in self._params:
            return self._params[key]
        self._params[key] = None  # recursion knows nothing
        result = self._compute(fn, param, depth)
        self._params[key] = result
        return result

    def present(self, value: cst.BaseExpression, caller: TracedFunction) -> bool:
        """Every trace of ``caller`` passes ``value`` as something that is not None: what
        a call into another module tells it (``OutgoingCalls.finish``)."""
        return self._value_may_be_missing(value, caller.node, 1) is False

    def _compute(self, fn: FunctionNode, param: cst.Param, depth: int) -> bool | None:
        info = self.traced.get(fn)
        if info is None or info.callers_elsewhere or depth > _MAX_DEPTH:
            return None
        bound = gets_instance(self.ctx, fn)
        if info.kind is TraceKind.CALLEE and info.parent is None:
            # Called from traced code of other modules only: what all those calls pass.
            return _passed_elsewhere(info.passed_elsewhere, fn, param, bound)
        if info.kind is not TraceKind.CALLEE:
            if param.default is None:
                return False  # a required argument: TensorFlow, Keras or the user gives one
            return self._bound_by_partial(fn, param, depth)
        sites = self._passed_here(fn, param)
        if not sites:
            return None  # reached some other way (a callback handed to a TensorFlow API)
        verdicts = set()
        for caller, passed in sites:
            if passed is None:
                return None
            verdicts.add(self._value_may_be_missing(passed, caller, depth + 1))
        return _combine(verdicts)

    def _bound_by_partial(self, fn: FunctionNode, param: cst.Param, depth: int) -> bool | None:
        """A root's optional ``param``: what ``functools.partial(fn, param=...)`` binds, when
        every use of the function in the module is such a partial; else it may be left out."""
        if not isinstance(fn, cst.FunctionDef) or self.ctx.enclosing_class(fn) is not None:
            return True
        uses = mentions(self.ctx, fn)
        verdicts = set()
        for use in uses:
            call = partial_of(self.ctx, use)
            if call is None:
                return True
            value = keyword(call, param.name.value)
            if value is None:
                return True
            verdicts.add(
                self._value_may_be_missing(value, self.ctx.enclosing_function(call), depth + 1)
            )
        return _combine(verdicts) if verdicts else True

    def _value_may_be_missing(
        self, expr: cst.BaseExpression, at: FunctionNode | None, depth: int
    ) -> bool | None:
        if _falsy_literal(expr):
            return True
        if not isinstance(expr, cst.Name):
            # An attribute, a call's result, an operation: an object, by the optional
            # parameter's contract (`self.crf.chain_kernel`, `get_decoder(spec)`).
            return False
        if depth > _MAX_DEPTH:
            return None
        verdicts = set()
        for a in self.ctx.bindings(expr):
            node = a.node
            if isinstance(node, cst.Param):
                owner = self.ctx.parent(self.ctx.parent(node))  # Param -> Parameters -> def
                if not isinstance(owner, cst.FunctionDef | cst.Lambda) or owner is not at:
                    return None
                verdicts.add(self._may_be_missing(owner, node, depth))
                continue
            if isinstance(a.scope, GlobalScope) or not isinstance(node, cst.Name):
                return None
            value = assigned_value(self.ctx, node, with_items=False)
            if value is None:
                if not self._unpacked_from_a_result(node):
                    return None
                verdicts.add(False)  # `(logits, kernel), *_ = self(x)`: part of a result
                continue
            verdicts.add(self._value_may_be_missing(value, at, depth + 1))
        return _combine(verdicts) if verdicts else None

    def _unpacked_from_a_result(self, target: cst.Name) -> bool:
        """``target`` is unpacked from a call's result (``a, (b, c) = f(x)``)."""
        node = self.ctx.parent(target)
        if not isinstance(node, cst.Element | cst.StarredElement):
            return False
        while isinstance(node, cst.Element | cst.StarredElement | cst.Tuple | cst.List):
            node = self.ctx.parent(node)
        stmt = self.ctx.parent(node) if isinstance(node, cst.AssignTarget) else None
        return isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Call)

    # -- objects made per trace ------------------------------------------------------------

    def made_per_trace(self, name: cst.Name, fn: FunctionNode, depth: int = 0) -> bool:
        """Parameter ``name`` of traced ``fn`` holds, on every trace, an object made during
        that trace: each traced call passes one its caller made (a construction, a display,
        a part of one such as ``msg.circuit``), or passes nothing and the body makes one
        (``if msg is None: msg = Program()``).  What ``fn`` writes into it is then per-trace
        scratch of its caller, not state that outlives the call."""
        params = [a for a in self.ctx.bindings(name) if isinstance(a.node, cst.Param)]
        if len(params) != 1 or _owner(self.ctx, params[0].node) is not fn:
            return False
        param = params[0].node
        others = [a for a in self.ctx.bindings(name) if a is not params[0]]
        if not all(self._fresh_binding(a.node) for a in others):
            return False
        info = self.traced.get(fn)
        if info is not None and not others and _op_made_arguments(info):
            return True  # a loop variable or an element: the graph op makes it in the trace
        if info is None or info.kind is not TraceKind.CALLEE or depth > _MAX_DEPTH:
            return False  # a root: TensorFlow, Keras or the user passes what outlives it
        rebuilt = _rebuilt_when_none(self.ctx, fn, name.value)
        bound = gets_instance(self.ctx, fn)
        if info.parent is None or info.callers_elsewhere:
            if not _fresh_elsewhere(info.passed_elsewhere, fn, param, bound, rebuilt):
                return False
            if info.parent is None:
                return True
        sites = self._passed_here(fn, param)
        if not sites:
            return False
        for caller, passed in sites:
            if passed is None:
                return False
            if passed is param.default or _is_none(passed):
                # Left out: the default, made once with the def (`registry={}` outlives
                # every call), unless it is None and the body makes its own object.
                if not (rebuilt and _is_none(passed)):
                    return False
            elif not self.fresh_value(passed, caller, depth + 1):
                return False
        return True

    def fresh_value(self, expr: cst.BaseExpression, at: FunctionNode, depth: int = 1) -> bool:
        """``expr``, in traced ``at``, is an object made during the trace (see
        ``made_per_trace``): what a call into another module tells it."""
        if depth > _MAX_DEPTH:
            return False
        if _fresh_expression(self.ctx, expr):
            return True
        if isinstance(expr, cst.Attribute):
            return self.fresh_value(expr.value, at, depth + 1)  # a part of a fresh object
        if not isinstance(expr, cst.Name) or expr.value in ("self", "cls"):
            return False
        found = self.ctx.bindings(expr)
        own = self.ctx.function_scope(at)
        if not found or any(a.scope is not own for a in found):
            return False
        params = [a for a in found if isinstance(a.node, cst.Param)]
        if params:
            return self.made_per_trace(expr, at, depth + 1)
        return all(self._fresh_binding(a.node) for a in found)

    def _fresh_binding(self, node: cst.CSTNode) -> bool:
        value = assigned_value(self.ctx, node, with_items=False)
        return value is not None and _fresh_expression(self.ctx, value)


# Graph ops that call their callable with values they make while tracing (loop variables,
# elements): the labels that name such a callable's trace.
_OP_MADE_ARGUMENTS = (
    "tf.while_loop",
    "tf.map_fn",
    "tf.scan",
    "tf.foldl",
    "tf.foldr",
    "tf.vectorized_map",
    "keras.ops.while_loop",
    "keras.ops.fori_loop",
    "keras.ops.scan",
    "keras.ops.map",
    "keras.ops.vectorized_map",
)


def _op_made_arguments(info: TracedFunction) -> bool:
    """``info`` is the callable of a graph op that calls it with values it makes while
    tracing (a ``tf.while_loop`` body's loop variables, a ``tf.map_fn`` element)."""
    return info.kind is TraceKind.CONTROL_FLOW and info.reason.startswith(_OP_MADE_ARGUMENTS)


def _owner(ctx: ModuleContext, param: cst.CSTNode) -> FunctionNode | None:
    owner = ctx.parent(ctx.parent(param))  # Param -> Parameters -> def
    return owner if isinstance(owner, cst.FunctionDef | cst.Lambda) else None


def _fresh_expression(ctx: ModuleContext, expr: cst.BaseExpression) -> bool:
    """A display, a comprehension, a container call or a construction (``Program()``,
    ``pb.Circuit()``: a CapWords callee)."""
    if is_container_literal(ctx, expr):
        return True
    return isinstance(expr, cst.Call) and names_a_class(expr.func)


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _rebuilt_when_none(ctx: ModuleContext, fn: FunctionNode, name: str) -> bool:
    """The body starts by making its own object when none is given: ``if msg is None:
    msg = Program()`` (or ``msg = msg or Program()``) among its first statements."""
    if not isinstance(fn, cst.FunctionDef) or not isinstance(fn.body, cst.IndentedBlock):
        return False
    for stmt in fn.body.body[:4]:
        if isinstance(stmt, cst.If) and _none_test(stmt.test, name):
            for inner in stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ():
                if _assigns_fresh(ctx, inner, name):
                    return True
        if _assigns_fresh(ctx, stmt, name, allow_or=True):
            return True
    return False


def _none_test(test: cst.BaseExpression, name: str) -> bool:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return isinstance(test.expression, cst.Name) and test.expression.value == name
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value == name
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and _is_none(test.comparisons[0].comparator)
    )


def _assigns_fresh(
    ctx: ModuleContext, stmt: cst.CSTNode, name: str, *, allow_or: bool = False
) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    if not (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and small.targets[0].target.value == name
    ):
        return False
    value = small.value
    if allow_or:
        return (
            isinstance(value, cst.BooleanOperation)
            and isinstance(value.operator, cst.Or)
            and isinstance(value.left, cst.Name)
            and value.left.value == name
            and _fresh_expression(ctx, value.right)
        )
    return _fresh_expression(ctx, value)


def _fresh_elsewhere(
    passed: tuple[frozenset[str], ...] | None,
    fn: FunctionNode,
    param: cst.Param,
    bound: bool,
    rebuilt: bool,
) -> bool:
    """``ExternalRoot.passed`` read for ``param``: every call from elsewhere gives it an
    object made in the calling trace (``fresh:`` keys), or gives it nothing (no ``given:``
    key) when the body makes its own."""
    if passed is None:
        return False
    keys = argument_keys(fn, param, bound)
    for call in passed:
        if {f"fresh:{k}" for k in keys} & call:
            continue
        if rebuilt and not {f"given:{k}" for k in keys} & call:
            continue
        return False
    return True


def _up_to(ctx: ModuleContext, node: cst.CSTNode, fn: FunctionNode) -> list[cst.CSTNode]:
    """The ancestors of ``node`` inside ``fn``."""
    found = []
    for anc in ctx.ancestors(node):
        if anc is fn:
            break
        found.append(anc)
    return found


def _passed_elsewhere(
    passed: tuple[frozenset[str], ...] | None, fn: FunctionNode, param: cst.Param, bound: bool
) -> bool | None:
    """``ExternalRoot.passed`` read for ``param``: False when every call from elsewhere
    passes it a value that is not None, None otherwise."""
    if passed is None:
        return None
    keys = argument_keys(fn, param, bound)
    return False if all(keys & call for call in passed) else None


def _parameters(fn: FunctionNode) -> tuple[cst.Param, ...]:
    """The named parameters of ``fn`` (not ``*args``/``**kwargs``)."""
    return (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)


def _combine(verdicts: set[bool | None]) -> bool | None:
    if True in verdicts:
        return True
    return None if None in verdicts else False


def _optional_test(test: cst.BaseExpression) -> tuple[cst.Name, bool] | None:
    """``(name, runs_when_missing)`` for ``name is None`` / ``not name`` (True) and
    ``name is not None`` / ``name`` (False); None for any other test."""
    if isinstance(test, cst.Name) and test.value not in ("True", "False", "None"):
        return test, False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression
        if isinstance(inner, cst.Name):
            return inner, True
        return None
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.left, cst.Name)
    ):
        target = test.comparisons[0]
        right = target.comparator
        if isinstance(right, cst.Name) and right.value == "None":
            if isinstance(target.operator, cst.Is):
                return test.left, True
            if isinstance(target.operator, cst.IsNot):
                return test.left, False
    return None


def _falsy_literal(expr: cst.BaseExpression) -> bool:
    """``None``, ``False``, ``0``, ``""`` or an empty display."""
    if isinstance(expr, cst.Name):
        return expr.value in ("None", "False")
    if isinstance(expr, cst.Integer):
        return expr.value == "0"
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value in ("", b"")
    if isinstance(expr, cst.List | cst.Tuple | cst.Dict | cst.Set):
        return not expr.elements
    return False


# Context managers of test frameworks that expect their block to raise.
_EXPECT_RAISES = frozenset(
    {
        "assertRaises",
        "assertRaisesRegex",
        "assertRaisesRegexp",
        "assertRaisesWithLiteralMatch",
        "assert_raises",  # NumPy's, and the helper TensorFlow's guides define
    }
)


def expected_to_raise(ctx: ModuleContext, fn: TracedFunction) -> bool:
    """The root of ``fn``'s trace is used only inside ``with self.assertRaises(...):``,
    ``with pytest.raises(...):`` or ``with assert_raises(...):`` blocks (``tf.function(foo,
    autograph=False)`` then a call, to show that ``foo`` cannot be traced that way; a guide's
    cell showing the error): the code expects the trace to fail."""
    root = fn
    while root.parent is not None:
        root = root.parent
    node = root.node
    if not isinstance(node, cst.FunctionDef):
        return False
    uses = [u for u in mentions(ctx, node) if _latest_binding(ctx, u) in (None, node)]
    if root.kind is TraceKind.WRAPPED:
        # The uses that make the trace: `tf.function(foo, autograph=False)`.
        traced = ctx.traced
        options = getattr(traced, "tf_function_options", None)
        uses = [
            use
            for use in uses
            if isinstance(call := ctx.parent(ctx.parent(use)), cst.Call)
            and options is not None
            and options(call.func) is not None
        ]
    return bool(uses) and all(_in_expect_raises(ctx, use) for use in uses)


def _latest_binding(ctx: ModuleContext, use: cst.Name) -> cst.CSTNode | None:
    """For a use in straight-line module code, the binding of its name that comes last
    before it (a notebook defines ``f`` cell after cell); None elsewhere."""
    if ctx.enclosing_function(use) is not None:
        return None
    order = ctx.source_order(use)
    before = [
        a.node
        for a in ctx.bindings(use)
        if ctx.enclosing_function(a.node) is None and ctx.source_order(a.node) < order
    ]
    return max(before, key=ctx.source_order) if before else None


def _in_expect_raises(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.With):
            for item in anc.items:
                call = item.item
                if not isinstance(call, cst.Call):
                    continue
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in _EXPECT_RAISES:
                    return True
                if isinstance(func, cst.Name) and func.value in _EXPECT_RAISES:
                    return True
                if ctx.resolve(func).is_("pytest.raises"):
                    return True
        if isinstance(anc, cst.FunctionDef | cst.ClassDef) and anc is not node:
            return False
    return False
