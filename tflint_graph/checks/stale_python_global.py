from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.core.finding import Severity
from tflint_graph.core.vocabulary import CONTROL_FLOW, DATASET_CALLBACK_METHODS, STRATEGY_RUN
from tflint_graph.model import walk
from tflint_graph.model.calls import passed_for
from tflint_graph.model.context import FunctionNode, ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.scopes import Assignment, FunctionScope, GlobalScope, Scope
from tflint_graph.model.state import owning_class
from tflint_graph.model.values import (
    assigned_value,
    attributes_by_name,
    declared_outer_names,
    names_by_text,
    sole_name_target,
    statement_of,
)
from tflint_graph.traced import traced_of
from tflint_graph.traced.callsites import callback_hook


@dataclass(frozen=True)
class _Rebinding:
    line: int
    how: str


def _branches(ctx: ModuleContext, node: cst.CSTNode, stop: cst.CSTNode | None) -> dict:
    """Map of enclosing if/try statements to the branch of each that holds ``node``."""
    out: dict[cst.CSTNode, int] = {}
    child = node
    for anc in ctx.ancestors(node):
        if anc is stop:
            break
        if isinstance(anc, cst.If):
            out[anc] = 0 if child is anc.body else 1
        elif isinstance(anc, cst.Try | cst.TryStar):
            if child in anc.handlers:
                out[anc] = 1 + anc.handlers.index(child)
            elif child is anc.body or child is anc.orelse:
                out[anc] = 0
        child = anc
    return out


def _in_loop(ctx: ModuleContext, node: cst.CSTNode, stop: cst.CSTNode | None) -> bool:
    for anc in ctx.ancestors(node):
        if anc is stop or isinstance(anc, cst.FunctionDef | cst.Lambda | cst.ClassDef):
            return False
        if isinstance(anc, cst.For | cst.While):
            return True
    return False


class StalePythonGlobal(Rule):
    """Traced code reads a variable that the program reassigns: the graph keeps a stale value."""

    code = "TFG109"
    name = "stale-python-global"
    QUIET_IN_TESTS = True
    severity = Severity.WARNING

    VALID = [
        """
import tensorflow as tf

SCALE = 2.0  # assigned once: a constant

@tf.function
def step(x):
    return x * SCALE
""",
        """
import tensorflow as tf

try:
    import horovod
    HAVE_HVD = True
except ImportError:
    HAVE_HVD = False

@tf.function
def step(x):
    return x * 2 if HAVE_HVD else x
""",
        """
import tensorflow as tf

import fast_ops
import slow_ops

_OPS = fast_ops

def use_slow_ops():
    global _OPS
    _OPS = slow_ops  # picks an implementation before models are built

@tf.function
def step(x):
    return _OPS.gather_rows(x)
""",
        """
import tensorflow as tf

lr = tf.Variable(0.1)

@tf.function
def step(x):
    return x * lr

for epoch in range(3):
    lr.assign(lr * 0.5)
""",
    ]
    INVALID = [
        """
import tensorflow as tf

learning_rate = 0.1

@tf.function
def train_step(w, g):
    return w - learning_rate * g  # TFG109

for epoch in range(10):
    learning_rate = 0.1 * 0.9 ** epoch
""",
        """
import tensorflow as tf

threshold = 0.5

def set_threshold(value):
    global threshold
    threshold = value

@tf.function
def keep(x):
    return tf.boolean_mask(x, x > threshold)  # TFG109
""",
    ]

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._reported: set[tuple[FunctionNode, str]] = set()
        self._cache: dict[tuple[int, str, int], _Rebinding | None] = {}

    def visit_Name(self, node: cst.Name, fn: TracedFunction) -> None:
        if (fn.node, node.value) in self._reported:
            return
        scope = self.ctx.scope(node)
        if scope is None or node not in self.ctx.memo(
            "loads:" + node.value, scope, lambda: _load_nodes(scope, node.value)
        ):
            return
        found = self.ctx.bindings(node)
        if not found or any(type(a) is not Assignment for a in found):
            return
        if _called_through(self.ctx, node) and not _holds_tensorflow_object(self.ctx, found):
            return
        owners = {id(a.scope): a.scope for a in found}
        if len(owners) != 1:
            return
        owner = next(iter(owners.values()))
        own = self.ctx.function_scope(fn.node)
        if owner is own or not isinstance(owner, GlobalScope | FunctionScope):
            return
        if node.value in declared_outer_names(self.ctx, fn.node):
            return  # a global written here is TFG105's
        if isinstance(owner, FunctionScope) and _scope_function(self.ctx, owner) in self.ctx.traced:
            return  # created anew by each trace of the enclosing function
        rebinding = self._rebinding(owner, node.value, found, fn.node, self._roots(fn))
        if rebinding is None:
            return
        stop = None if isinstance(owner, GlobalScope) else _scope_function(self.ctx, owner)
        defined = _definition_end(self.ctx, fn.node, stop)
        if _unused_after_change(self.ctx, fn, found, stop, defined):
            return  # nothing uses the function after the rebinding (a script, a notebook)
        if _mapped_per_iteration(self.ctx, fn, node):
            return  # `for i in ...: ds.map(lambda x: f(x, i))`: each dataset keeps its own i
        self._reported.add((fn.node, node.value))
        loop = _closing_loop(self.ctx, fn.node, node)
        if loop is not None:
            # Python's late binding, not a trace-time value: eager calls see it too.
            self.report(
                node,
                f"{node.value} is the variable of the loop around this function (line "
                f"{self.ctx.line(loop)}), which only reads it when called, after the loop has "
                f"moved on: every call sees its last value, traced or eager; bind it now "
                f"with a default argument ({node.value}={node.value})",
                fn,
            )
            return
        self.report(
            node,
            f"{node.value} is read while tracing {fn.where} but {rebinding.how} "
            f"(line {rebinding.line}); the graph keeps the value seen at trace time; "
            "pass it in as a tensor argument or keep it in a tf.Variable",
            fn,
        )

    def visit_Attribute(self, node: cst.Attribute, fn: TracedFunction) -> None:
        """``self.beta`` read in a tf.function method while an eager method of the class
        reassigns it (``end_episode()`` annealing ``self.beta``): the cached graph keeps the
        value of its trace."""
        if not (isinstance(node.value, cst.Name) and node.value.value == "self"):
            return
        attr = node.attr.value
        if (fn.node, "self." + attr) in self._reported or not _is_load(self.ctx, node):
            return
        cls = owning_class(self.ctx, fn.node)
        root = fn
        while root.parent is not None:
            root = root.parent
        if (
            cls is None
            or root.kind not in (TraceKind.DECORATED, TraceKind.WRAPPED)
            or owning_class(self.ctx, root.node) is not cls
        ):
            return  # `self` may be another object on each call of the root
        if root.kind is TraceKind.WRAPPED and _wrapped_per_call(self.ctx, root.node, cls):
            return  # `soft = tf.function(self._soft)` in the hook: each call traces anew
        writer = self.ctx.memo(
            "tfg109-eager-writer:" + attr, cls, lambda: _eager_writer(self.ctx, cls, attr)
        )
        if writer is None:
            return
        method, line = writer
        if _run_once_hooks_only(self.ctx, cls, root.node):
            return  # `on_train_end` runs the function once, after every change
        self._reported.add((fn.node, "self." + attr))
        self.report(
            node,
            f"self.{attr} is read while tracing {fn.where} but {method}() reassigns it outside "
            f"traced code (line {line}); the graph keeps the value seen at trace time; keep "
            "it in a tf.Variable and .assign() to it, or pass it in as a tensor argument",
            fn,
        )

    def _roots(self, fn: TracedFunction) -> tuple[TracedFunction, ...]:
        """The traced functions without a traced caller whose traces run ``fn``: the root of
        its chain and those of every traced call of it in this module."""
        arguments = traced_of(self.ctx).arguments
        found: dict[int, TracedFunction] = {}
        seen: set[int] = set()
        pending = [fn]
        while pending:
            info = pending.pop()
            if id(info.node) in seen or len(seen) > 50:
                continue
            seen.add(id(info.node))
            if info.parent is None:
                found[id(info.node)] = info
                continue
            pending.append(info.parent)
            pending.extend(caller for caller, _ in arguments.traced_callers(info.node))
        return tuple(found.values())

    def _rebinding(
        self,
        scope: Scope,
        name: str,
        found: list[Assignment],
        fn: FunctionNode,
        roots: tuple[TracedFunction, ...],
    ) -> _Rebinding | None:
        stop = None if isinstance(scope, GlobalScope) else _scope_function(self.ctx, scope)
        defined = _definition_end(self.ctx, fn, stop)
        key = (id(scope), name, defined, tuple(id(r.node) for r in roots))
        if key not in self._cache:
            self._cache[key] = self._find_rebinding(found, stop, defined, roots)
        return self._cache[key]

    def _find_rebinding(
        self,
        found: list[Assignment],
        stop: FunctionNode | None,
        defined: int,
        roots: tuple[TracedFunction, ...],
    ) -> _Rebinding | None:
        """How the name changes after the reading function is defined, if it does.

        Bindings before the definition are setup (conditional defaults, normalisation);
        the graph sees their final value.  What counts: a write from another function (it
        may run between calls), and, after the definition, an in-place update, a rebinding
        in a loop, or a second assignment.
        """
        ctx = self.ctx
        if any(isinstance(a.node, cst.FunctionDef | cst.ClassDef) for a in found):
            return None
        if _same_constant(ctx, found):
            return None  # `n = 200000` set again to the same value: the trace's value holds
        earlier: list[cst.CSTNode] = []
        later: list[tuple[cst.CSTNode, int]] = []
        for a in sorted(found, key=lambda a: ctx.line(a.node)):
            line = ctx.line(a.node)
            holder = ctx.enclosing_function(a.node) if not isinstance(a.node, cst.Param) else stop
            if holder is not stop:
                if traced_of(ctx).setup.guarded(a.node, holder):
                    continue  # lazy initialisation (`if X is None: X = ...`): set up once
                if roots and all(_wrapped_anew(ctx, a.node, r) for r in roots):
                    continue  # a fresh `tf.function(root)` traces with the new value
                if roots and all(_built_anew(ctx, a.node, holder, r) for r in roots):
                    continue  # the writer then builds what traces: fresh objects, new traces
                name = holder.name.value if isinstance(holder, cst.FunctionDef) else "a lambda"
                return _Rebinding(line, f"is reassigned in {name}()")
            stmt = statement_of(ctx, a.node)
            if isinstance(stmt, cst.AnnAssign) and stmt.value is None:
                continue  # `x: float` declares, it does not bind
            if ctx.line(stmt) <= defined:
                earlier.append(stmt)
                continue
            if isinstance(stmt, cst.AugAssign):
                return _Rebinding(line, "is updated in place after it")
            if isinstance(stmt, cst.For) or _in_loop(ctx, stmt, stop):
                return _Rebinding(line, "is rebound in a loop after it")
            later.append((stmt, line))
        for i, (stmt, line) in enumerate(later):
            others = earlier + [s for s, _ in later[:i]]
            if any(not _exclusive(ctx, other, stmt, stop) for other in others):
                return _Rebinding(line, "is reassigned after its definition")
        return None


# Methods where a class sets itself up (before any trace), and Python's own protocol.
_SETUP_METHODS = frozenset({"__init__", "build", "_build", "build_from_config", "__setstate__"})
_PYTHON_BUILTINS = frozenset({"min", "max", "int", "float", "round", "abs", "bool"})


def _is_load(ctx: ModuleContext, node: cst.Attribute) -> bool:
    parent = ctx.parent(node)
    if isinstance(parent, cst.AssignTarget | cst.AugAssign | cst.AnnAssign | cst.Del):
        return False
    return not (isinstance(parent, cst.Element) and not isinstance(ctx.parent(parent), cst.List))


def _eager_writer(ctx: ModuleContext, cls: cst.ClassDef, attr: str) -> tuple[str, int] | None:
    """An eager method of ``cls`` that the module calls and that reassigns ``self.<attr>``
    to a Python number (a literal, arithmetic, ``min``/``max``, a conditional of those, a
    NumPy reduction such as ``np.mean(d)``), the first one found;
    None when any write of the attribute holds something else than a number or a name
    (a tf.Variable, a layer, a container: other rules' business) or none qualifies."""
    found: tuple[str, int] | None = None
    for stmt in cls.body.body:
        if not isinstance(stmt, cst.FunctionDef):
            continue
        for node in walk.descendants(stmt):
            target, value = _self_write(node, attr)
            if target is None:
                continue
            number = value is not None and _number_of_own_method(ctx, cls, value)
            if value is None or not (number or _python_operand(ctx, value)):
                return None  # `self.beta = config.beta_start` in __init__ is fine too
            name = stmt.name.value
            if (
                found is None
                and (number or _python_number(ctx, value) or _set_to_numbers(ctx, stmt, value))
                and name not in _SETUP_METHODS
                and stmt not in ctx.traced
                and ctx.enclosing_function(node) is stmt
                and not traced_of(ctx).setup.guarded(target, stmt)
                and (_called_by_name(ctx, name) or callback_hook(ctx, stmt) is not None)
                and not _setup_only(ctx, name)
            ):
                found = (name, ctx.line(node))
    return found


def _setup_only(ctx: ModuleContext, method: str, depth: int = 0) -> bool:
    """``method`` is private (other modules and users do not call it) and every mention of
    it in the module is a ``self.method(...)`` call in a setup method of a class
    (``__init__``, ``build``), or in a method only those call: it runs while the object is
    made, before anything is traced."""
    if not method.startswith("_") or method.startswith("__"):
        return False
    for name in names_by_text(ctx).get(method, ()):
        if not isinstance(ctx.parent(name), cst.FunctionDef | cst.Attribute):
            return False  # `set_rate = _configure`, `property(None, _set)`: another name
    mentions = attributes_by_name(ctx).get(method, [])
    for node in mentions:
        call = ctx.parent(node)
        caller = ctx.enclosing_function(node)
        if not (
            isinstance(call, cst.Call)
            and call.func is node
            and isinstance(node.value, cst.Name)
            and node.value.value == "self"
            and isinstance(caller, cst.FunctionDef)
            and ctx.enclosing_class(caller) is not None
        ):
            return False
        name = caller.name.value
        if name not in _SETUP_METHODS and not (
            depth < 3 and name != method and _setup_only(ctx, name, depth + 1)
        ):
            return False
    return bool(mentions)


def _number_of_own_method(ctx: ModuleContext, cls: cst.ClassDef, value: cst.BaseExpression) -> bool:
    """``self.schedule()``: a method of ``cls`` every ``return`` of which gives a Python number
    (``return self.final - (self.final - self.init) * math.cos(...)``)."""
    if not (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and _is_self_attr(value.func, value.func.attr.value)
    ):
        return False
    name = value.func.attr.value
    method = next(
        (m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.name.value == name),
        None,
    )
    if method is None:
        return False
    returns = [
        r
        for r in walk.descendants(method)
        if isinstance(r, cst.Return) and ctx.enclosing_function(r) is method
    ]
    return bool(returns) and all(
        r.value is not None and _python_number(ctx, r.value) for r in returns
    )


def _set_to_numbers(ctx: ModuleContext, method: cst.FunctionDef, value: cst.BaseExpression) -> bool:
    """``value`` is a parameter of ``method`` (a setter: ``def set_w(self, w): self.w = w``),
    every call of it on an instance of its class in the module passes a Python number for
    it, and one such call may come after a trace: in a loop, or after a call of a traced
    method of the same object (``trainer.step(x)`` then ``trainer.set_w(0.5)``).  A setter
    called once, before anything runs, configures the object."""
    if not isinstance(value, cst.Name):
        return False
    params = [*method.params.posonly_params, *method.params.params]
    index = next((i for i, p in enumerate(params) if p.name.value == value.value), None)
    cls = ctx.enclosing_class(method)
    if index is None or index == 0 or len(ctx.bindings(value)) != 1 or cls is None:
        return False
    traced = {
        m.name.value for m in cls.body.body if isinstance(m, cst.FunctionDef) and m in ctx.traced
    }
    late = False
    found = False
    for node, receiver in _method_calls_named(ctx, method.name.value):
        if not _instance_of(ctx, receiver, cls):
            continue
        arg = passed_for(node, method.params, params[index], bound=True)
        if arg is None or not _python_number(ctx, arg):
            return False
        found = True
        late = late or _in_loop(ctx, node, None) or _after_traced_call(ctx, node, traced)
    return found and late


def _instance_of(ctx: ModuleContext, receiver: cst.BaseExpression, cls: cst.ClassDef) -> bool:
    """``receiver`` is ``self`` in ``cls``, or a name every binding of which constructs it."""
    if isinstance(receiver, cst.Name) and receiver.value == "self":
        return ctx.enclosing_class(receiver) is cls
    if type(receiver) is not cst.Name:
        return False
    found = ctx.bindings(receiver)
    for a in found:
        bound = assigned_value(ctx, a.node) if isinstance(a.node, cst.Name) else None
        if not (
            isinstance(bound, cst.Call)
            and isinstance(bound.func, cst.Name)
            and bound.func.value == cls.name.value
        ):
            return False
    return bool(found)


def _after_traced_call(ctx: ModuleContext, call: cst.Call, traced: set[str]) -> bool:
    """An earlier call in the same function (or module code) runs a traced method of the
    same object (``trainer.step(x)`` before ``trainer.set_w(0.5)``)."""
    receiver = ctx.code(call.func.value) if isinstance(call.func, cst.Attribute) else None
    holder = ctx.enclosing_function(call)
    at = ctx.source_order(call)
    return any(
        ctx.code(other) == receiver
        and ctx.source_order(node) < at
        and ctx.enclosing_function(node) is holder
        for name in traced
        for node, other in _method_calls_named(ctx, name)
    )


def _method_calls_named(ctx: ModuleContext, name: str) -> list[tuple[cst.Call, cst.BaseExpression]]:
    """The module's calls ``<receiver>.name(...)`` with their receivers, from its index of
    attributes by name (no walk of the module)."""
    found = []
    for attr in attributes_by_name(ctx).get(name, []):
        call = ctx.parent(attr)
        if isinstance(call, cst.Call) and call.func is attr:
            found.append((call, attr.value))
    return found


def _self_write(
    node: cst.CSTNode, attr: str
) -> tuple[cst.Attribute | None, cst.BaseExpression | None]:
    """``self.<attr> = v`` / ``self.<attr> += v``: the target and ``v``."""
    targets: list[cst.BaseExpression] = []
    value: cst.BaseExpression | None = None
    if isinstance(node, cst.Assign):
        targets, value = [t.target for t in node.targets], node.value
    elif isinstance(node, cst.AugAssign | cst.AnnAssign):
        targets, value = [node.target], node.value
    for target in targets:
        if _is_self_attr(target, attr):
            assert isinstance(target, cst.Attribute)
            return target, value
        if isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                if _is_self_attr(element.value, attr):
                    assert isinstance(element.value, cst.Attribute)
                    return element.value, None  # unpacked: the value is not known
    return None, None


def _is_self_attr(expr: cst.BaseExpression, attr: str) -> bool:
    return (
        isinstance(expr, cst.Attribute)
        and isinstance(expr.value, cst.Name)
        and expr.value.value == "self"
        and expr.attr.value == attr
    )


_NUMPY_REDUCTIONS = tuple(
    f"numpy.{f}" for f in ("mean", "sum", "max", "min", "median", "std", "var", "prod", "average")
)


def _python_number(ctx: ModuleContext, value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Integer | cst.Float):
        return True
    if isinstance(value, cst.UnaryOperation):
        return _python_number(ctx, value.expression)
    if isinstance(value, cst.BinaryOperation):
        return _python_operand(ctx, value.left) and _python_operand(ctx, value.right)
    if isinstance(value, cst.IfExp):
        return _python_operand(ctx, value.body) and _python_operand(ctx, value.orelse)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
        return any(ctx.resolve(value.func).is_builtin(b) for b in _PYTHON_BUILTINS) and all(
            _python_operand(ctx, a.value) for a in value.args
        )
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        # `np.mean(losses)`: a NumPy scalar, which a trace takes in as a constant too;
        # `math.cos(x)` of numbers a float
        res = ctx.resolve(value.func)
        if res.startswith("math.") and all(_python_operand(ctx, a.value) for a in value.args):
            return True
        return res.is_(*_NUMPY_REDUCTIONS)
    return False


def _python_operand(ctx: ModuleContext, value: cst.BaseExpression) -> bool:
    """A number, or a name or attribute holding whatever it holds (not a call's result)."""
    if isinstance(value, cst.Name | cst.Attribute):
        return True
    return _python_number(ctx, value)


def _called_by_name(ctx: ModuleContext, method: str) -> bool:
    """Some code of the module calls ``<something>.method(...)``."""
    calls = ctx.memo("tfg109-method-calls", ctx.module, lambda: _method_calls(ctx.module))
    return method in calls


def _method_calls(module: cst.Module) -> frozenset[str]:
    return frozenset(
        n.func.attr.value
        for n in walk.descendants(module)
        if type(n) is cst.Call and isinstance(n.func, cst.Attribute)
    )


def _unused_after_change(
    ctx: ModuleContext,
    fn: TracedFunction,
    found: list[Assignment],
    stop: FunctionNode | None,
    defined: int,
) -> bool:
    """Nothing uses the traced function after the name changes: in the owner's straight-line
    code (the module, a notebook's cells in order, or the enclosing function's body) every use
    of its traced root comes before every later rebinding, and none shares a loop with one.

    A trace needs a use: a call, a hand-over that runs it right there (``strategy.run(fn)``,
    ``tf.vectorized_map(fn, xs)``, ``tf.function(fn)(x)``), and, when a new definition follows
    the change, ``ds.map(fn)``; a use inside a function counts where that function is used.
    The graph of a function nothing uses again never runs with the new value.  Any other
    reference (stored, returned, passed elsewhere) or a write from a function leaves the order
    unknown, and the finding stands."""
    changes = _later_rebindings(ctx, found, stop, defined)
    root = fn
    while root.parent is not None:
        root = root.parent
    if not changes or not _within(ctx, root.node, stop):
        return False
    start = _first_possible_trace(ctx, root.node, stop, set())
    if start is not None:
        # A change made before anything can run the function is setup: the first trace
        # already sees its value (`model = multi_gpu_model(model)`, then `compile(...)`).
        changes = [c for c in changes if _last_line(ctx, c, stop) >= start]
        if not changes:
            return True
    first = min(ctx.line(c) for c in changes)
    uses = _uses(ctx, root.node, stop, first, {})
    if uses == [] and isinstance(root.node, cst.FunctionDef):
        return _redefined(ctx, root.node, ctx.line(root.node))  # never used: dead code
    if not uses:
        return False
    # A tf.function on the way to the reader keeps its own traces: a fresh pipeline calls it
    # and gets the graph traced before the change.
    chain = [fn]
    while chain[-1].parent is not None:
        chain.append(chain[-1].parent)  # type: ignore[arg-type]
    cached = any(t.kind in (TraceKind.DECORATED, TraceKind.WRAPPED) for t in chain)
    for use in uses:
        loops = _loops(ctx, use, stop)
        for change in changes:
            if not cached and _made_after(ctx, use, change, stop):
                continue  # a pipeline made after the change traces with the new value
            inside = any(a is change for a in ctx.ancestors(use))
            if ctx.line(use) >= ctx.line(change) and not inside:
                return False  # used again after the change
            if id(change) in loops or loops & _loops(ctx, change, stop):
                return False  # the loop runs the use again after the change
    return True


def _first_possible_trace(
    ctx: ModuleContext, node: FunctionNode, stop: FunctionNode | None, seen: set[int]
) -> int | None:
    """The first line of the owner's straight-line code that may run or trace ``node``: its
    first reference that does more than store it (in a name, a list or dict display, a
    ``tf.function(...)`` wrapper), through the names it is stored in and the functions that
    refer to it; None when a reference lies outside the owner (it may run any time)."""
    if id(node) in seen:
        return None
    seen.add(id(node))
    cls = ctx.enclosing_class(node) if isinstance(node, cst.FunctionDef) else None
    if cls is not None and ctx.parent(ctx.parent(node)) is cls:
        # A method (`train_step`) runs through an instance of its class: constructing one
        # stores it, and its first use may run the method (`model.fit(...)`).
        refs = _references(ctx, cls, cls.name)
        refs = refs and [_constructed(ctx, ref) for ref in refs]
    elif isinstance(node, cst.FunctionDef):
        refs = _references(ctx, node, node.name)
    else:
        refs = [node]
    if not refs:
        return None
    first: int | None = None
    for ref in refs:
        line = _first_run_from(ctx, ref, node, stop, seen)
        if line is None:
            return None
        first = line if first is None else min(first, line)
    return first


def _constructed(ctx: ModuleContext, ref: cst.CSTNode) -> cst.CSTNode:
    """The construction ``Cls(...)`` that ``ref`` (a load of the class) makes, else ``ref``:
    ``model = Cls(...)`` stores the object, whose uses are followed like a stored function."""
    parent = ctx.parent(ref)
    return parent if isinstance(parent, cst.Call) and parent.func is ref else ref


def _first_run_from(
    ctx: ModuleContext,
    ref: cst.CSTNode,
    node: FunctionNode,
    stop: FunctionNode | None,
    seen: set[int],
) -> int | None:
    holder = ctx.enclosing_function(ref)
    if holder is not stop and holder is not node:
        if holder is None or not _within(ctx, holder, stop):
            return None
        return _first_possible_trace(ctx, holder, stop, seen)
    child: cst.CSTNode = ref
    parent = ctx.parent(ref)
    while isinstance(parent, cst.Element | cst.List | cst.Tuple | cst.DictElement | cst.Dict) or (
        isinstance(parent, cst.Arg)
        and isinstance(call := ctx.parent(parent), cst.Call)
        and traced_of(ctx).is_tf_function(call.func)
    ):
        child = parent if not isinstance(parent, cst.Arg) else ctx.parent(parent)
        parent = ctx.parent(child)
    # Stored: through a display or a tf.function wrapper, a lambda bound to a name, or an
    # object constructed (its method runs where the object is used).
    stored = child is not ref or isinstance(ref, cst.Lambda | cst.Call)
    if isinstance(parent, cst.Assign) and parent.value is child and stored:
        target = sole_name_target(parent)
        if target is None:
            return None
        later = _references(ctx, target, target)
        # Reads inside the function itself (a method reading the global instance) run
        # only once something else has run it.
        later = later and [r for r in later if not any(a is node for a in ctx.ancestors(r))]
        if not later:
            return None
        lines = [_first_run_from(ctx, r, node, stop, seen) for r in later]
        known = [line for line in lines if line is not None]
        return min(known) if len(known) == len(lines) else None
    return ctx.line(ref)


def _last_line(ctx: ModuleContext, change: cst.CSTNode, stop: FunctionNode | None) -> int:
    """The last line that ``change`` may run on: the end of the outermost loop of the
    owner's code around it, else its own line."""
    last = ctx.line(change)
    for anc in ctx.ancestors(change):
        if anc is stop:
            break
        if isinstance(anc, cst.For | cst.While):
            last = max(last, ctx.end_line(anc))
    return last


def _loops(ctx: ModuleContext, node: cst.CSTNode, stop: FunctionNode | None) -> set[int]:
    """The loops of the owner's code around ``node``."""
    out: set[int] = set()
    for anc in ctx.ancestors(node):
        if anc is stop:
            break
        if isinstance(anc, cst.For | cst.While):
            out.add(id(anc))
    return out


def _later_rebindings(
    ctx: ModuleContext, found: list[Assignment], stop: FunctionNode | None, defined: int
) -> list[cst.CSTNode] | None:
    """The owner's statements that bind the name after the reading function is defined; None
    when some other function writes it (it may run between any two calls)."""
    out: list[cst.CSTNode] = []
    for a in found:
        holder = ctx.enclosing_function(a.node) if not isinstance(a.node, cst.Param) else stop
        if holder is not stop:
            if traced_of(ctx).setup.guarded(a.node, holder):
                continue
            return None
        stmt = statement_of(ctx, a.node)
        if isinstance(stmt, cst.AnnAssign) and stmt.value is None:
            continue  # `x: float` declares, it does not bind
        if ctx.line(stmt) > defined:
            out.append(stmt)
    return out


def _uses(
    ctx: ModuleContext,
    node: FunctionNode,
    stop: FunctionNode | None,
    changed: int,
    memo: dict[FunctionNode, list[cst.CSTNode] | None],
) -> list[cst.CSTNode] | None:
    """Where the owner's own code (``stop``'s body, or the module) uses ``node``: the nodes
    of its calls and hand-overs, through the functions that use it; None when some reference
    could use it anywhere.  ``memo`` holds each function's answer (None while it is being
    found: a recursive use is unknown), so shared helpers are walked once."""
    if node in memo:
        return memo[node]
    memo[node] = None
    memo[node] = found = _find_uses(ctx, node, stop, changed, memo)
    return found


def _find_uses(
    ctx: ModuleContext,
    node: FunctionNode,
    stop: FunctionNode | None,
    changed: int,
    memo: dict[FunctionNode, list[cst.CSTNode] | None],
) -> list[cst.CSTNode] | None:
    refs = _references(ctx, node, node.name) if isinstance(node, cst.FunctionDef) else [node]
    if not refs:
        if isinstance(node, cst.FunctionDef) and _redefined(ctx, node, ctx.line(node)):
            return []  # a later `def` of the name takes over before anything used this one
        return None  # used by no name in sight (a method, an export): anywhere, any time
    out: list[cst.CSTNode] = []
    for ref in refs:
        sites = _sites(ctx, ref, node, changed)
        if sites is None:
            return None
        for site in sites:
            holder = ctx.enclosing_function(site)
            if holder is stop:
                out.append(site)
                continue
            if holder is None or not _within(ctx, holder, stop):
                return None  # used outside the owner
            inner = _uses(ctx, holder, stop, changed, memo)
            if inner is None:
                return None
            out.extend(inner)
    return out


def _within(ctx: ModuleContext, node: cst.CSTNode, stop: FunctionNode | None) -> bool:
    return stop is None or any(a is stop for a in ctx.ancestors(node))


def _references(ctx: ModuleContext, node: cst.CSTNode, name: cst.Name) -> list[cst.CSTNode] | None:
    """The loads that may read the binding a ``def`` (or an alias assignment) makes, less
    those of the same code that a later binding of the name takes over (a notebook cell run
    again, edited)."""
    scope = ctx.scope(node)
    binding = next(
        (a for a in (scope[name.value] if scope else ()) if getattr(a, "node", None) is node),
        None,
    )
    if binding is None:
        return None
    later = [
        a.index
        for a in binding.scope[name.value]
        if a.scope is binding.scope and a.index > binding.index
    ]
    return [
        access.node
        for access in binding.references
        if access.scope is not binding.scope or not any(i < access.index for i in later)
    ]


def _sites(
    ctx: ModuleContext, ref: cst.CSTNode, fn: FunctionNode, changed: int
) -> list[cst.CSTNode] | None:
    """Where ``ref`` (the function, a lambda, a ``tf.function`` of it) traces or runs it: a
    call; a hand-over to graph control flow or ``strategy.run``, which call it right there
    and keep nothing; a ``tf.function(ref)`` called at once, or bound to a name and used as
    such; ``ds.map(ref)`` or ``ref.get_concrete_function()`` (traced there, the graph kept)
    only when the function is defined again after the change at line ``changed``, the new
    pipeline taking over (a notebook's next cell).  None: passed on, it may run anywhere."""
    parent = ctx.parent(ref)
    if isinstance(parent, cst.Call) and parent.func is ref:
        return [ref]
    if isinstance(parent, cst.Assign) and parent.value is ref and not isinstance(ref, cst.Name):
        # `fn = lambda t: ...`, `step = tf.function(f)`: used where the name is.
        target = sole_name_target(parent)
        if target is None:
            return None
        return _gather(ctx, _references(ctx, target, target), fn, changed)
    if _traced_here(ctx, ref):
        if isinstance(fn, cst.FunctionDef) and _redefined(ctx, fn, changed):
            return [ref]
        return _dataset_uses(ctx, ref)
    if not isinstance(parent, cst.Arg) or parent.value is not ref:
        return None
    call = ctx.parent(parent)
    if not isinstance(call, cst.Call):
        return None
    code = traced_of(ctx)
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in STRATEGY_RUN:
        now = call.args[0] is parent and code.is_strategy(func.value)
        return [ref] if now else None
    res = code.resolve(func)
    if any(res.is_(k) for k in CONTROL_FLOW if k not in _KEEPS_CALLABLE):
        return [ref]
    if res.is_(*_RUNS_NOW) or (isinstance(func, cst.Attribute) and func.attr.value in _RUN_NOW):
        return [ref]  # `opt.minimize(loss, var_list)` calls `loss` right there
    if code.is_tf_function(func):
        return _sites(ctx, call, fn, changed)
    return None


def _dataset_uses(ctx: ModuleContext, ref: cst.CSTNode) -> list[cst.CSTNode] | None:
    """Where the pipeline ``ds.map(ref)`` made is used: the graph traced there runs only
    when the dataset is read, so its reads are the uses (``train = ds.map(f).batch(8)``, then
    every load of ``train``; a pipeline handed on or iterated right away is used there).  A
    pipeline a function returns (``def get_dataset(): return ds.map(f)``) is made anew, and
    traced, by each call of that function: the uses are those of what each call returns.
    Each use is recorded with the node that made its pipeline (``_pipelines``).  None when
    it goes anywhere else."""
    arg = ctx.parent(ref)
    node = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(node, cst.Call):
        return None  # `fn.get_concrete_function(spec)`: kept for an export
    node = _pipeline_end(ctx, node)
    holder = ctx.enclosing_function(node)
    if (
        isinstance(holder, cst.FunctionDef)
        and not holder.decorators  # `@functools.lru_cache`: the same pipeline again
        and ctx.enclosing_function(ref) is holder
        and _returned(ctx, node, holder, 0)
    ):
        refs = _references(ctx, holder, holder.name)
        if not refs:
            return None
        out: list[cst.CSTNode] = []
        for call in refs:
            made = ctx.parent(call)
            if not (isinstance(made, cst.Call) and made.func is call):
                return None  # the maker handed on: its pipelines may be made anywhere
            end = _pipeline_end(ctx, made)
            found = _pipeline_reads(ctx, end)
            if found is None and not _never_read(ctx, end):
                return None
            out.extend(found or ())
        return out
    return _pipeline_reads(ctx, node)


def _returned(ctx: ModuleContext, node: cst.Call, holder: cst.FunctionDef, depth: int) -> bool:
    """The pipeline ``node`` ends only in ``holder``'s ``return``: returned as it is, or
    through local names it is extended in (``ds = ds.map(f)``, then ``ds = ds.batch(8)``,
    then ``return ds``)."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Return):
        return True
    if depth > _MAX_FLOW or not (isinstance(parent, cst.Assign) and parent.value is node):
        return False
    target = sole_name_target(parent)
    refs = _references(ctx, target, target) if target is not None else None
    if not refs:
        return False
    for read in refs:
        if ctx.enclosing_function(read) is not holder:
            return False
        if isinstance(ctx.parent(read), cst.Return):
            continue
        attr = ctx.parent(read)
        call = ctx.parent(attr) if isinstance(attr, cst.Attribute) else None
        if not (isinstance(call, cst.Call) and call.func is attr):
            return False
        if not _returned(ctx, _pipeline_end(ctx, call), holder, depth + 1):
            return False
    return True


_MAX_FLOW = 20


def _pipeline_end(ctx: ModuleContext, node: cst.Call) -> cst.Call:
    """``.map(f).batch(8).prefetch(2)``: the last call on the same pipeline."""
    while True:
        attr = ctx.parent(node)
        call = ctx.parent(attr) if isinstance(attr, cst.Attribute) else None
        if not (isinstance(call, cst.Call) and call.func is attr):
            return node
        node = call


def _never_read(ctx: ModuleContext, node: cst.Call) -> bool:
    """``node``'s pipeline is bound to a name that no code reads before it is bound again
    (``train = get_dataset(...)`` in a notebook cell run before the one that rebinds it)."""
    parent = ctx.parent(node)
    if not (isinstance(parent, cst.Assign) and parent.value is node):
        return False
    target = sole_name_target(parent)
    return target is not None and _references(ctx, target, target) == []


def _pipeline_reads(ctx: ModuleContext, node: cst.Call) -> list[cst.CSTNode] | None:
    """The reads of the pipeline ``node`` makes, each recorded as made there."""
    parent = ctx.parent(node)
    reads: list[cst.CSTNode] | None = None
    if isinstance(parent, cst.Assign) and parent.value is node:
        target = sole_name_target(parent)
        reads = _references(ctx, target, target) if target is not None else None
    elif isinstance(parent, cst.Arg) or (isinstance(parent, cst.For) and parent.iter is node):
        reads = [node]
    if not reads:
        return None
    made = _pipelines(ctx)
    for read in reads:
        made[id(read)] = node
    return reads


def _pipelines(ctx: ModuleContext) -> dict[int, cst.CSTNode]:
    """Reads of ``tf.data`` pipelines that trace a function -> the node that made each."""
    return ctx.memo("tfg109-pipelines", ctx.module, dict)


def _made_after(
    ctx: ModuleContext, use: cst.CSTNode, change: cst.CSTNode, stop: FunctionNode | None
) -> bool:
    """``use`` reads a pipeline made (and traced) after ``change``, by code that runs again
    whenever the change does: it has the new value."""
    made = _pipelines(ctx).get(id(use))
    return (
        made is not None
        and ctx.line(made) > ctx.line(change)
        and not (_loops(ctx, change, stop) - _loops(ctx, made, stop))
    )


def _gather(
    ctx: ModuleContext, refs: list[cst.CSTNode] | None, fn: FunctionNode, changed: int
) -> list[cst.CSTNode] | None:
    if not refs:
        return None  # read by no name in sight: it may be used anywhere
    out: list[cst.CSTNode] = []
    for ref in refs:
        sites = _sites(ctx, ref, fn, changed)
        if sites is None:
            return None
        out.extend(sites)
    return out


# Return a wrapper that runs the callable later, wherever it goes.
_KEEPS_CALLABLE = frozenset({"tensorflow.recompute_grad"})
# Calls that run a callable argument before they return and keep nothing: an optimizer's
# `minimize(loss, var_list)`, and TensorFlow's structure mapping.
_RUN_NOW = frozenset({"minimize"})
_RUNS_NOW = ("tensorflow.nest.map_structure",)


def _redefined(ctx: ModuleContext, fn: cst.FunctionDef, changed: int) -> bool:
    scope = ctx.scope(fn)
    if scope is None:
        return False
    return any(
        isinstance(b.node, cst.FunctionDef) and b.node is not fn and ctx.line(b.node) > changed
        for b in scope[fn.name.value]
    )


def _mapped_per_iteration(ctx: ModuleContext, fn: TracedFunction, name: cst.Name) -> bool:
    """``fn`` is a lambda handed to a ``tf.data`` transformation inside a loop that binds
    ``name`` (its target): the transformation traces it right there, once per iteration,
    so each pipeline keeps that iteration's value, which is what the loop is for."""
    lam = fn.node
    if not isinstance(lam, cst.Lambda) or not _traced_here(ctx, lam):
        return False
    for anc in ctx.ancestors(lam):
        if isinstance(anc, cst.FunctionDef):
            return False
        if isinstance(anc, cst.For) and any(
            isinstance(n, cst.Name) and n.value == name.value for n in _targets(anc.target)
        ):
            return True
    return False


def _closing_loop(ctx: ModuleContext, fn: FunctionNode, name: cst.Name) -> cst.For | None:
    """The ``for`` loop around ``fn`` (a lambda or a nested ``def``, inside the function that
    owns ``name``) whose target is ``name``: ``fn`` closes over the loop variable."""
    if not isinstance(fn, cst.Lambda | cst.FunctionDef):
        return None
    for anc in ctx.ancestors(fn):
        if isinstance(anc, cst.For) and any(
            isinstance(n, cst.Name) and n.value == name.value for n in _targets(anc.target)
        ):
            return anc
        if isinstance(anc, cst.FunctionDef | cst.Lambda | cst.ClassDef):
            return None
    return None


def _targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, cst.Tuple | cst.List):
        return [t for el in target.elements for t in _targets(el.value)]
    return [target]


def _traced_here(ctx: ModuleContext, ref: cst.CSTNode) -> bool:
    """``ref`` is handed to a ``tf.data`` transformation (``ds.map(parse)``) or asked for a
    concrete function, which traces it right there, with the values of that moment."""
    arg = ctx.parent(ref)
    if isinstance(arg, cst.Attribute) and arg.value is ref:
        # `serve.get_concrete_function(spec)`: traced there, for an export.
        return arg.attr.value == "get_concrete_function"
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value in DATASET_CALLBACK_METHODS
    )


def _same_constant(ctx: ModuleContext, found: list[Assignment]) -> bool:
    """Every binding is ``name = <the same constant>`` (a literal, an expression of literals,
    a TensorFlow or NumPy constant such as ``tf.float32``): whichever one a trace read, the
    graph holds the value every later one sets."""
    codes = set()
    for a in found:
        if not isinstance(a.node, cst.Name):
            return False
        value = assigned_value(ctx, a.node, with_items=False)
        if value is None or not _constant(ctx, value):
            return False
        codes.add(ctx.code(value))
    return len(codes) == 1


def _constant(ctx: ModuleContext, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Integer | cst.Float | cst.Imaginary | cst.SimpleString):
        return True
    if isinstance(expr, cst.ConcatenatedString):
        return _constant(ctx, expr.left) and _constant(ctx, expr.right)
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    if isinstance(expr, cst.UnaryOperation):
        return _constant(ctx, expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _constant(ctx, expr.left) and _constant(ctx, expr.right)
    if isinstance(expr, cst.Tuple | cst.List):
        # `CLASSES = [0, 29, 99]` set again to the same list: equal values whichever was read
        return all(
            not isinstance(el, cst.StarredElement) and _constant(ctx, el.value)
            for el in expr.elements
        )
    if isinstance(expr, cst.Attribute):
        # `tf.float32`, `np.float64`: a dtype or a constant of the library, not state.
        res = ctx.resolve(expr)
        return res.startswith("tensorflow.", "numpy.") and not res.startswith("tensorflow.keras.")
    return False


def _definition_end(ctx: ModuleContext, fn: FunctionNode, stop: FunctionNode | None) -> int:
    """Last line of the statement, in the owner's own body, that defines ``fn``."""
    body = None if stop is None else stop.body
    child: cst.CSTNode = fn
    for anc in ctx.ancestors(fn):
        if (body is None and isinstance(anc, cst.Module)) or anc is body:
            return ctx.end_line(child)
        child = anc
    return ctx.end_line(fn)


# What runs its body again and again: loops and comprehensions.
_REPEATS = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _built_anew(
    ctx: ModuleContext, write: cst.CSTNode, holder: FunctionNode, root: TracedFunction
) -> bool:
    """After ``write`` the function that makes it goes on to make what traces ``root``
    afresh: it constructs the Keras class whose method ``root`` is (or a class of the module
    whose ``__init__``/``build`` does, at any depth: `Encoder(...)` making the attention
    layer), or hands ``root`` to ``ds.map`` (traced right there).  A factory that sets a
    configuration global and builds the model or pipeline: each build traces with its value."""
    if not isinstance(holder, cst.FunctionDef):
        return False
    at = ctx.source_order(write)
    node = root.node
    if root.kind is TraceKind.DATASET:
        refs = [node] if isinstance(node, cst.Lambda) else _references(ctx, node, node.name)
        return any(
            ctx.source_order(ref) > at
            and ctx.enclosing_function(ref) is holder
            and _traced_here(ctx, ref)
            for ref in refs or ()
        )
    if root.kind is not TraceKind.KERAS or not isinstance(node, cst.FunctionDef):
        return False
    cls = ctx.enclosing_class(node)
    # Constructing traces nothing: `fit`/`predict` trace later and read the global then, so
    # the factory may run only once here (two models built first would share the last value).
    calls = _references(ctx, holder, holder.name) or []
    if len(calls) > 1 or any(isinstance(a, _REPEATS) for c in calls for a in ctx.ancestors(c)):
        return False
    return cls is not None and cls in _classes_made(ctx, holder, at)


def _classes_made(ctx: ModuleContext, fn: cst.FunctionDef, after: int) -> set[cst.ClassDef]:
    """The module's classes ``fn`` constructs after source position ``after``, and those
    their ``__init__``/``build`` construct, at any depth."""
    made: set[cst.ClassDef] = set()
    todo: list[tuple[cst.CSTNode, int]] = [(fn.body, after)]
    while todo:
        body, start = todo.pop()
        for node in walk.descendants(body):
            if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)):
                continue
            if ctx.source_order(node) <= start:
                continue
            for a in ctx.bindings(node.func):
                cls = a.node
                if not isinstance(cls, cst.ClassDef) or cls in made:
                    continue
                made.add(cls)
                for stmt in cls.body.body:
                    if isinstance(stmt, cst.FunctionDef) and stmt.name.value in _SETUP_METHODS:
                        todo.append((stmt.body, -1))
    return made


def _run_once_hooks_only(ctx: ModuleContext, cls: cst.ClassDef, root: FunctionNode) -> bool:
    """Every call of the traced method ``root`` is ``self.root(...)`` in a hook Keras runs
    once per run (``on_train_end``, ``on_train_begin``...): it traces once, at that moment."""
    if not isinstance(root, cst.FunctionDef):
        return False
    found = False
    for node, receiver in _method_calls_named(ctx, root.name.value):
        method = ctx.enclosing_function(node)
        if not (
            isinstance(receiver, cst.Name)
            and receiver.value == "self"
            and isinstance(method, cst.FunctionDef)
            and ctx.enclosing_class(method) is cls
            and method.name.value in _ONCE_PER_RUN_HOOKS
        ):
            return False
        found = True
    return found


_ONCE_PER_RUN_HOOKS = frozenset(
    {f"on_{run}_{edge}" for run in ("train", "test", "predict") for edge in ("begin", "end")}
)


def _wrapped_per_call(ctx: ModuleContext, root: FunctionNode, cls: cst.ClassDef) -> bool:
    """Every ``tf.function(self.<root>)`` of the class is made in a method that runs on
    each call (not ``__init__``/``build``): each call of that method wraps, and traces, the
    function anew (TFG302's finding), reading the new value."""
    if not isinstance(root, cst.FunctionDef):
        return False
    code = traced_of(ctx)
    found = False
    for node in walk.descendants(cls):
        if not (
            isinstance(node, cst.Call)
            and code.is_tf_function(node.func)
            and node.args
            and _is_self_attr(node.args[0].value, root.name.value)
        ):
            continue
        method = ctx.enclosing_function(node)
        if not isinstance(method, cst.FunctionDef) or method.name.value in _SETUP_METHODS:
            return False
        found = True
    return found


def _wrapped_anew(ctx: ModuleContext, write: cst.CSTNode, traced: TracedFunction) -> bool:
    """The block of the statement that holds ``write`` also binds a fresh
    ``tf.function(root)`` (``step_fn = tf.function(train_step)`` after a new stage's models
    are made), and no statement between the two uses that wrapper: its first call, after
    the write, traces anew and reads the new value; the old wrapper is not called again
    from this block.  Not when ``root`` is a ``tf.function`` itself (decorated, or rebound
    to one): the new wrapper would call it, and it keeps its own traces."""
    root = traced.node
    if traced.kind is not TraceKind.WRAPPED or not isinstance(root, cst.FunctionDef):
        return False
    if root.decorators or len(ctx.bindings(root.name)) != 1:
        return False
    statement = statement_of(ctx, write)
    line = ctx.parent(statement)
    if isinstance(line, cst.SimpleStatementLine):
        statement = line
    block = ctx.parent(statement)
    if not isinstance(block, cst.IndentedBlock | cst.Module):
        return False
    body = list(block.body)
    at = next((i for i, s in enumerate(body) if s is statement), None)
    if at is None:
        return False
    wrappers = traced_of(ctx)
    for i, other in enumerate(body):
        if not isinstance(other, cst.SimpleStatementLine) or len(other.body) != 1:
            continue
        assign = other.body[0]
        target = sole_name_target(assign) if isinstance(assign, cst.Assign) else None
        if target is None or not any(
            isinstance(n, cst.Call)
            and wrappers.is_tf_function(n.func)
            and n.args
            and isinstance(n.args[0].value, cst.Name)
            and n.args[0].value.value == root.name.value
            for n in (assign.value, *walk.descendants(assign.value))
        ):
            continue
        between = body[min(i, at) + 1 : max(i, at)]
        if not any(
            isinstance(n, cst.Name) and n.value == target.value
            for s in between
            for n in walk.descendants(s)
        ):
            return True
    return False


def _exclusive(
    ctx: ModuleContext, a: cst.CSTNode, b: cst.CSTNode, stop: cst.CSTNode | None
) -> bool:
    """Two statements on different branches of one if/try: alternatives, not a sequence."""
    ba, bb = _branches(ctx, a, stop), _branches(ctx, b, stop)
    return any(node in bb and bb[node] != branch for node, branch in ba.items())


def _called_through(ctx: ModuleContext, name: cst.Name) -> bool:
    """``name(...)`` or ``name.method(...)``: the variable picks an implementation (a
    function, a module, a strategy), which the graph is built from; no tensor argument or
    ``tf.Variable`` could hold it, and switching it is configuration, not data."""
    parent = ctx.parent(name)
    if isinstance(parent, cst.Call):
        return parent.func is name
    if isinstance(parent, cst.Attribute) and parent.value is name:
        call = ctx.parent(parent)
        return isinstance(call, cst.Call) and call.func is parent
    return False


def _holds_tensorflow_object(ctx: ModuleContext, found: list[Assignment]) -> bool:
    """Some binding stores what a TensorFlow/Keras call made (``load_model(...)``, a
    ``Sequential``): a stateful object with variables, whose replacement a traced graph
    would not see, not an implementation picked by name."""
    for a in found:
        value = (
            assigned_value(ctx, a.node, with_items=False) if isinstance(a.node, cst.Name) else None
        )
        if isinstance(value, cst.Call) and ctx.resolve(value.func).startswith(
            "tensorflow.", "keras.", "tf_keras."
        ):
            return True
    return False


def _load_nodes(scope: Scope, name: str) -> set[cst.CSTNode]:
    return {access.node for access in scope.accesses[name]}


def _scope_function(ctx: ModuleContext, scope: Scope) -> FunctionNode | None:
    node = getattr(scope, "node", None)
    return node if isinstance(node, cst.FunctionDef | cst.Lambda) else None
