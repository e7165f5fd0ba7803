"""TFG302: a tf.function created again and again, so that every new one traces again.

A ``tf.function`` object owns its graph cache.  Making a new one in each iteration of a loop
(``f = tf.function(g); f(x)``), on each call of a step or helper that is called in a loop, in
a per-epoch Keras callback hook, or in a Keras ``call`` that runs eagerly, and calling it
there, traces the Python function anew every time.  Verified with TensorFlow 2.21 (a Python
counter in the traced body): 6 iterations trace 6 times and TensorFlow warns "5 out of the
last 5 calls ... triggered tf.function retracing ... (1) creating @tf.function repeatedly in
a loop"; the same holds for ``@tf.function`` on a ``def`` inside the loop, for a helper called
from a loop, for ``on_epoch_end`` (4 epochs, 4 traces) and for an eager Keras ``call``; a
guarded cache (``if self._fn is None``) or ``functools.lru_cache`` on the factory trace once,
and a tf.function made inside another tf.function traces once per trace of the outer one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.messages import shorten
from tflint_graph.core.finding import Severity
from tflint_graph.model import walk
from tflint_graph.model.calls import argument
from tflint_graph.model.context import FunctionNode, ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.names import dotted
from tflint_graph.model.values import assigned_value, calls_in
from tflint_graph.traced import traced_of
from tflint_graph.traced.callsites import call_sites, callback_hook, loops_around

# Decorators that make a function body run once per distinct arguments.
_CACHES = (
    "functools.lru_cache",
    "functools.cache",
    "functools.cached_property",
    "builtins.property",
)
_MAX_DEPTH = 3


class FunctionRecreated(Rule):
    """A tf.function created inside a loop or a repeatedly called function retraces each time."""

    code = "TFG302"
    name = "function-recreated"
    severity = Severity.WARNING
    QUIET_IN_TESTS = True
    traced_only = False  # the loops and callers that repeat it are eager code

    VALID = [
        """
import tensorflow as tf

def train_step(x):
    return x * 2.0

step = tf.function(train_step)  # created once

x = tf.ones([2])
for epoch in range(10):
    step(x)
""",
        """
import tensorflow as tf

class Trainer:
    def __init__(self):
        self._step = None

    def step(self, x):
        if self._step is None:  # created on the first call only
            self._step = tf.function(self._train)
        return self._step(x)

    def _train(self, x):
        return x * 2.0

trainer = Trainer()
for epoch in range(10):
    trainer.step(tf.ones([2]))
""",
    ]
    INVALID = [
        """
import tensorflow as tf

def train_step(x):
    return x * 2.0

x = tf.ones([2])
for epoch in range(10):
    step = tf.function(train_step)  # TFG302
    step(x)
""",
        """
import tensorflow as tf

def forward(x):
    return x * 2.0

def evaluate(x):
    predict = tf.function(forward)  # TFG302
    return predict(x)

for epoch in range(10):
    evaluate(tf.ones([2]))
""",
    ]

    def visit_Call(self, node: cst.Call, fn: TracedFunction | None) -> None:
        if traced_of(self.ctx).tf_function_options(node.func) is None:
            return
        wrapped = argument(node, 0, "func", strict=True)
        if wrapped is None:
            return  # `tf.function(jit_compile=True)`: a decorator factory, no function yet
        what = shorten(self.ctx.code(node), 50)
        self._check(node, node, wrapped, f"`{what}`", fn)

    def visit_FunctionDef(self, node: cst.FunctionDef, fn: TracedFunction | None) -> None:
        traced = traced_of(self.ctx)
        for dec in node.decorators:
            if traced.tf_function_options(dec.decorator) is not None:
                # The decorator applies tf.function each time the `def` statement runs; the
                # finding goes on the decorator, the application (SPEC: "at the offending
                # ... tf.function(...) application").
                what = f"@tf.function on {node.name.value}()"
                self._check(dec, node, node, what, fn)
                return

    # -- the judgement --------------------------------------------------------------------
    def _check(
        self,
        at: cst.CSTNode,
        made: cst.CSTNode,
        wrapped: cst.CSTNode,
        what: str,
        fn: TracedFunction | None,
    ) -> None:
        """``made`` evaluates to a new tf.function of ``wrapped``; report at ``at`` when it is
        made repeatedly and called after each making."""
        ctx = self.ctx
        owner = ctx.enclosing_function(made)
        if fn is not None:
            self._check_traced(at, made, what, fn, owner)
            return
        for loop in loops_around(ctx, made):
            # `tf.function(make_loss(smoothing))`: the same code closing over another Python
            # value each iteration still retraces (pass the value as a tensor instead); only
            # a different function (`tf.function(fn)` with `fn` from the loop) is exempt.
            identity = wrapped.func if isinstance(wrapped, cst.Call) else wrapped
            if _guarded(ctx, made, loop) or _bound_in(ctx, identity, loop):
                return  # created once, or a different function in each iteration
            calls = _calls_of(ctx, made, loop)
            if calls and not _passes_each_iteration_values(ctx, calls, loop):
                line = ctx.position(loop).start.line
                self.report(
                    at,
                    f"{what} inside the loop at line {line} creates a new tf.function on every "
                    "iteration, and the loop calls it: a new tf.function starts with an empty "
                    "graph cache, so it traces again every time; create it once, before the loop",
                    None,
                    fix="move the tf.function(...) call (or the decorated def) before the loop",
                )
                return
        if not isinstance(owner, cst.FunctionDef) or _cached(ctx, owner):
            return
        if _guarded(ctx, made, owner):
            return
        if _called_in(ctx, made, owner):
            if _bound_in(ctx, wrapped, owner, skip_self=True) and not _same_each_call(
                ctx, wrapped, owner
            ):
                return  # wraps what the caller passes: maybe another function each call
            if _closes_over_fresh_owners(ctx, wrapped, owner):
                return  # the graph captures this call's variables: a new trace is needed
            why = self._repeated(owner, frozenset())
            if why is not None:
                self.report(
                    at,
                    f"{what} creates a new tf.function on every call of {owner.name.value}(), "
                    f"which {why}, and calls it there: each call traces it again; create it "
                    "once (at module level or in __init__) and reuse it",
                    None,
                    fix="create the tf.function once, outside the repeatedly called function",
                )
            return
        if _returned(ctx, made, owner):
            self._check_factory(at, what, owner)

    def _check_traced(
        self,
        at: cst.CSTNode,
        made: cst.CSTNode,
        what: str,
        fn: TracedFunction,
        owner: FunctionNode | None,
    ) -> None:
        """In traced code a new tf.function is made once per trace of the enclosing graph:
        harmless under ``@tf.function``, but a Keras ``call`` also runs eagerly (``layer(x)``
        outside a graph), once per forward pass."""
        root = fn
        while root.parent is not None:
            root = root.parent
        node = root.node
        if not (
            root.kind is TraceKind.KERAS
            and isinstance(node, cst.FunctionDef)
            and node.name.value in ("call", *_KERAS_STEPS)
        ):
            return
        cls = _keras_class(self.ctx, node)
        if cls is None:
            return
        if (
            owner is None
            or _guarded(self.ctx, made, owner)
            or not _called_in(self.ctx, made, owner)
        ):
            return
        if node.name.value in _KERAS_STEPS:
            # SPEC names steps explicitly: one new tf.function per trace of the step, and one
            # per batch whenever the model runs eagerly (run_eagerly=True, debugging).
            self.report(
                at,
                f"{what} in {fn.where} creates a new tf.function each time the Keras step "
                "runs: every trace of the step, and every batch when the model runs eagerly "
                "(run_eagerly=True), traces it again; create it once, in __init__",
                fn,
                fix=f"create the tf.function in __init__ and reuse it in {node.name.value}()",
            )
            return
        self.report(
            at,
            f"{what} in {fn.where} creates a new tf.function on every forward pass of the "
            f"Keras {cls}: whenever it runs eagerly (`{cls.lower()}(x)` outside a graph) the new "
            "tf.function traces again; create it once, in __init__ or build()",
            fn,
            fix="create the tf.function in __init__ or build() and reuse it in call()",
        )

    def _check_factory(self, at: cst.CSTNode, what: str, factory: cst.FunctionDef) -> None:
        """``factory`` returns the new tf.function: a loop that calls the factory and then
        what it returned traces once per iteration."""
        ctx = self.ctx
        name = factory.name.value
        for where, call in call_sites(ctx, factory):
            if where is not None and where in ctx.traced:
                continue
            for loop in loops_around(ctx, call):
                if _guarded(ctx, call, loop) or _bound_in(ctx, call, loop):
                    break
                if _called_in(ctx, call, loop):
                    line = ctx.position(loop).start.line
                    self.report(
                        at,
                        f"{what} makes {name}() return a new tf.function on every call, and "
                        f"the loop at line {line} calls {name}() and then what it returns: "
                        f"each iteration traces again; call {name}() once, before the loop "
                        "(or cache it with functools.lru_cache)",
                        None,
                        fix=f"call {name}() once before the loop and reuse its result",
                    )
                    return

    def _repeated(self, fn: cst.FunctionDef, seen: frozenset[cst.FunctionDef]) -> str | None:
        """Why ``fn`` runs again and again, when this module shows it: a Keras callback hook,
        a call inside a loop, or a call from a function that itself repeats."""
        ctx = self.ctx
        hook = callback_hook(ctx, fn)
        if hook is not None:
            every = "epoch" if "epoch" in hook else "batch"
            return f"Keras calls every {every} (a callback hook)"
        if len(seen) >= _MAX_DEPTH or _cached(ctx, fn):
            return None
        for where, call in call_sites(ctx, fn):
            if where is not None and where in ctx.traced:
                continue
            loops = loops_around(ctx, call)
            line = ctx.position(call).start.line
            if loops:
                return f"is called in a loop (line {line})"
            if isinstance(where, cst.FunctionDef) and where not in seen and where is not fn:
                why = self._repeated(where, seen | {fn})
                if why is not None:
                    return f"is called from {where.name.value}() (line {line}), which {why}"
        return None


_KERAS_STEPS = ("train_step", "test_step", "predict_step")


def _keras_class(ctx, method: cst.FunctionDef) -> str | None:  # type: ignore[no-untyped-def]
    """``layer`` or ``model`` for the Keras class that defines ``method``."""
    cls = ctx.enclosing_class(method)
    if cls is None:
        return None
    kinds = traced_of(ctx).keras_kinds(cls)
    if "model" in kinds:
        return "model"
    if "layer" in kinds:
        return "layer"
    return None


# -- helpers -----------------------------------------------------------------------------
def _target(ctx, made: cst.CSTNode) -> cst.BaseExpression | None:  # type: ignore[no-untyped-def]
    """The name or ``self.attr`` the new tf.function is stored in (``step = tf.function(f)``,
    or the name a decorated ``def`` binds)."""
    if isinstance(made, cst.FunctionDef):
        return made.name
    parent = ctx.parent(made)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
    elif isinstance(parent, cst.AnnAssign) and parent.value is made:
        target = parent.target
    else:
        return None
    if isinstance(target, cst.Name) or (
        isinstance(target, cst.Attribute) and dotted(target) is not None
    ):
        return target
    return None  # `cache[key] = tf.function(f)`: a table, not one recreated object


# Constructors of objects that own variables: a graph that uses them captures them.
_VARIABLE_OWNERS = (
    "tensorflow.Variable",
    "tensorflow.train.Checkpoint",
    "tensorflow.keras.",
    "keras.",
    "tf_keras.",
)


def _closes_over_fresh_owners(ctx, wrapped: cst.CSTNode, owner: cst.FunctionDef) -> bool:  # type: ignore[no-untyped-def]
    """The wrapped function (or a local function it calls) uses a model, optimizer, metric,
    variable or project object that ``owner`` constructs on each call (``model =
    build_model(); opt = Adam()`` and a ``@tf.function`` step over them): each call has new
    variables, so it needs a new tf.function, and reusing one would create variables on a
    non-first call."""
    if not isinstance(wrapped, cst.FunctionDef | cst.Lambda):
        return False
    seen: set[cst.CSTNode] = set()
    todo: list[cst.CSTNode] = [wrapped]
    while todo and len(seen) < 8:
        fn = todo.pop()
        if fn in seen:
            continue
        seen.add(fn)
        for node in walk.descendants(fn):
            if not isinstance(node, cst.Name):
                continue
            for a in ctx.bindings(node):
                if ctx.enclosing_function(a.node) is not owner and a.node is not owner:
                    continue
                if isinstance(a.node, cst.FunctionDef) and a.node is not owner:
                    todo.append(a.node)  # a local helper the step calls (`strategy.run(step)`)
                    continue
                value = assigned_value(ctx, a.node) if isinstance(a.node, cst.Name) else None
                if isinstance(value, cst.Call) and _owns_variables(ctx, value):
                    return True
    return False


def _owns_variables(ctx, call: cst.Call) -> bool:  # type: ignore[no-untyped-def]
    res = ctx.resolve(call.func)
    if res.startswith(*_VARIABLE_OWNERS):
        return True
    # An instance of a project class (`ConvN(...)`, defined here or imported from the
    # project): a new object on each call, which a shared tf.function would not see.
    func = call.func
    if not isinstance(func, cst.Name):
        return False
    if res.imported:
        return func.value[:1].isupper() and all(ctx.view.may_be_project(n) for n in res.imported)
    return any(isinstance(a.node, cst.ClassDef) for a in ctx.bindings(func))


def _body(region: cst.CSTNode) -> cst.CSTNode | None:
    if isinstance(region, cst.For | cst.While | cst.FunctionDef):
        return region.body
    return None  # a comprehension clause: only an immediate call counts


def _called_in(ctx, made: cst.CSTNode, region: cst.CSTNode) -> bool:  # type: ignore[no-untyped-def]
    """The new tf.function is called within ``region`` (a loop or a function body):
    ``tf.function(f)(x)``, or through the name / ``self.attr`` it was stored in."""
    return bool(_calls_of(ctx, made, region))


def _calls_of(ctx, made: cst.CSTNode, region: cst.CSTNode) -> list[cst.Call]:  # type: ignore[no-untyped-def]
    parent = ctx.parent(made)
    if isinstance(parent, cst.Call) and parent.func is made:
        return [parent]
    target = _target(ctx, made)
    body = _body(region)
    if target is None or body is None:
        return []
    home = ctx.enclosing_function(made)
    wanted = dotted(target)
    found = []
    for call in ctx.memo("tfg302-calls", body, lambda: calls_in(body)):
        func = call.func
        if dotted(func) != wanted or ctx.enclosing_function(call) is not home:
            continue
        if isinstance(target, cst.Name):
            assert isinstance(func, cst.Name)
            if any(a.node is target or a.node is made for a in ctx.bindings(func)):
                found.append(call)
        else:
            found.append(call)
    return found


def _passes_each_iteration_values(ctx, calls: list[cst.Call], loop: cst.CSTNode) -> bool:  # type: ignore[no-untyped-def]
    """Every call gives the new function a variable of a ``for`` over Python values
    (``for dtype, dim in product(dtypes, dims): tf.function(f)(dtype, dim)``): each
    iteration traces anyway, so making the function once would save no trace."""
    if not isinstance(loop, cst.For) or traced_of(ctx).is_dataset(loop.iter):
        return False
    if isinstance(loop.iter, cst.Call) and ctx.resolve(loop.iter.func).startswith("tensorflow."):
        return False  # `tf.range(n)`: a tensor each step, one signature
    names = {n.value for n in (loop.target, *walk.descendants(loop.target)) if type(n) is cst.Name}
    return bool(calls) and all(
        any(isinstance(a.value, cst.Name) and a.value.value in names for a in call.args)
        for call in calls
    )


def _returned(ctx, made: cst.CSTNode, owner: cst.FunctionDef) -> bool:  # type: ignore[no-untyped-def]
    """``owner`` returns the new tf.function: ``return tf.function(f)``, or a local name
    bound to it (or a decorated nested ``def``)."""
    parent = ctx.parent(made)
    if isinstance(parent, cst.Return) and parent.value is made:
        return True
    target = _target(ctx, made)
    if not isinstance(target, cst.Name):
        return False
    for ret in ctx.memo("tfg302-returns", owner, lambda: _returns(owner)):
        value = ret.value
        if (
            isinstance(value, cst.Name)
            and value.value == target.value
            and ctx.enclosing_function(ret) is owner
            and ctx.is_local_to(value, owner)
        ):
            return True
    return False


def _cached(ctx, fn: cst.FunctionDef) -> bool:  # type: ignore[no-untyped-def]
    """``@functools.lru_cache`` / ``@cache`` / ``@cached_property``: the body runs once per
    distinct arguments."""
    for dec in fn.decorators:
        expr = dec.decorator
        target = expr.func if isinstance(expr, cst.Call) else expr
        if ctx.resolve(target).is_(*_CACHES):
            return True
    return False


def _guarded(ctx, made: cst.CSTNode, region: cst.CSTNode) -> bool:  # type: ignore[no-untyped-def]
    """The new tf.function may be made only once in ``region``: under an ``if`` whose test
    reads state (the stored tf.function, an attribute, a call, anything ``region`` binds,
    e.g. ``if epoch == 0``), or after an ``if`` that tests the stored tf.function (an early
    ``return`` of the cached one)."""
    target = _target(ctx, made)
    needles = _needles(target)
    child = made
    for anc in ctx.ancestors(made):
        if anc is region:
            break
        if (
            isinstance(anc, cst.If)
            and child is not anc.test
            and _stateful_test(ctx, anc.test, region, needles)
        ):
            return True
        if isinstance(anc, cst.IfExp) and child is not anc.test:
            return True
        if isinstance(anc, cst.Try) and child is not anc.body:
            return True  # a fallback in an `except`
        child = anc
    body = _body(region)
    if body is not None and needles:
        for test in ctx.memo("tfg302-tests", body, lambda: _tests(body)):
            if _mentions(ctx.code(test), needles):
                return True
    return False


def _mentions(code: str, needles: tuple[str, ...]) -> bool:
    """``code`` holds one of ``needles`` as a whole name (``h`` is not in ``epoch``)."""
    return any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", code) for n in needles)


def _needles(target: cst.BaseExpression | None) -> tuple[str, ...]:
    if target is None:
        return ()
    text = dotted(target)
    if text is None:
        return ()
    if isinstance(target, cst.Attribute):
        return (text, f'"{target.attr.value}"', f"'{target.attr.value}'")
    return (text,)


def _stateful_test(ctx, test: cst.BaseExpression, region: cst.CSTNode, needles) -> bool:  # type: ignore[no-untyped-def]
    if _mentions(ctx.code(test), needles):
        return True
    finder = _NamesRead()
    finder.walk(test)
    if finder.opaque:
        return True
    return any(_bound_inside(ctx, name, region, None) for name in finder.names)


def _bound_in(ctx, expr: cst.CSTNode, region: cst.CSTNode, skip_self: bool = False) -> bool:  # type: ignore[no-untyped-def]
    """``expr`` reads a name that ``region`` binds (a loop target, something assigned in the
    loop, a parameter of the function): it may be a different function each time.  With
    ``skip_self``, a method's ``self``/``cls`` does not count (the same object, typically)."""
    finder = _NamesRead()
    if isinstance(expr, cst.FunctionDef):
        finder.walk(expr.body)
        for dec in expr.decorators:
            finder.walk(dec)
    else:
        finder.walk(expr)
    names = finder.names
    if skip_self and isinstance(region, cst.FunctionDef) and region.params.params:
        first = region.params.params[0].name.value
        if first in ("self", "cls") and ctx.enclosing_class(region) is not None:
            names = [n for n in names if n.value != first]
    return any(_bound_inside(ctx, name, region, expr) for name in names)


def _same_each_call(ctx, wrapped: cst.CSTNode, owner: cst.FunctionDef) -> bool:  # type: ignore[no-untyped-def]
    """``tf.function(model.call)`` in ``evaluate(model, ds)``: every call of ``owner`` that
    repeats passes, for each parameter ``wrapped`` reads, a value the repetition does not
    change: from a loop of this module, one the loop does not rebind (``evaluate(model,
    val_ds)`` with ``model`` built before the loop), or from another function, that
    function's own parameter passed on unchanged, itself passed so (``calibrate(model, ds)``
    in the loop, calling ``evaluate(model, ds)``)."""
    finder = _NamesRead()
    finder.walk(wrapped)
    params = {p.name.value: i for i, p in enumerate(owner.params.params)}
    used = {n.value for n in finder.names if n.value in params}
    if not used or ctx.enclosing_class(owner) is not None:
        return False  # methods: the receiver shifts positions; stay cautious
    return _passed_unchanged(ctx, owner, used, frozenset()) is True


def _passed_unchanged(
    ctx: ModuleContext,
    owner: cst.FunctionDef,
    names: set[str],
    seen: frozenset[cst.FunctionDef],
) -> bool | None:
    """Whether the calls of ``owner`` that repeat pass, for each of its parameters
    ``names``, a value that stays the same while they repeat (see ``_same_each_call``);
    None when no call of it repeats that this module shows (a call once, or one it cannot
    follow: left out)."""
    if len(seen) >= _MAX_DEPTH or ctx.enclosing_class(owner) is not None:
        return None
    params = {p.name.value: i for i, p in enumerate(owner.params.params)}
    found: bool | None = None
    for where, call in call_sites(ctx, owner):
        loops = loops_around(ctx, call)
        if loops:
            loop = loops[0]  # the innermost loop: one value per iteration
            for name in names:
                arg = argument(call, params[name], name, strict=True)
                # `calibrate(make_model(), ds)`: a value made by each iteration is new each time.
                if not isinstance(arg, _STABLE) or _bound_in(ctx, arg, loop):
                    return False
            found = True
            continue
        if not isinstance(where, cst.FunctionDef) or where is owner or where in seen:
            continue
        outer = {p.name.value for p in where.params.params}
        passed: set[str] = set()
        for name in names:
            arg = argument(call, params[name], name, strict=True)
            if not (
                isinstance(arg, cst.Name)
                and arg.value in outer
                and all(isinstance(a.node, cst.Param) for a in ctx.bindings(arg))
            ):
                passed = set()
                break
            passed.add(arg.value)
        above = _passed_unchanged(ctx, where, passed, seen | {owner}) if passed else None
        if above is False or (above is None and passed == set() and _repeats(ctx, where)):
            return False  # a repeated caller that makes the value itself, or changes it
        found = found or above
    return found


# Arguments that hold the same value on every iteration unless the loop rebinds them.
_STABLE = (cst.Name, cst.Attribute, cst.BaseNumber, cst.SimpleString, cst.ConcatenatedString)


def _repeats(ctx: ModuleContext, fn: cst.FunctionDef) -> bool:
    """Some call of ``fn`` in this module sits in a loop."""
    return any(loops_around(ctx, call) for _, call in call_sites(ctx, fn))


def _bound_inside(ctx, name: cst.Name, region: cst.CSTNode, own: cst.CSTNode | None) -> bool:  # type: ignore[no-untyped-def]
    """Some binding of ``name`` lies inside ``region`` (and outside ``own``), or is a
    parameter of ``region``."""
    for a in ctx.bindings(name):
        node = a.node
        if isinstance(node, cst.Param) and isinstance(region, cst.FunctionDef):
            if node in region.params.params or node in region.params.kwonly_params:
                return True
            if node in region.params.posonly_params or node is region.params.star_arg:
                return True
            if node is region.params.star_kwarg:
                return True
        inside_region = False
        inside_own = False
        for anc in ctx.ancestors(node):
            if own is not None and anc is own:
                inside_own = True
            if anc is region:
                inside_region = True
                break
        if node is own:
            inside_own = True
        if inside_region and not inside_own:
            return True
    return False


class _NamesRead(walk.Visitor):
    """Variable reads in an expression (not attribute names or keywords); ``opaque`` when
    it also reads attributes, calls or subscripts (state this module cannot follow)."""

    def __init__(self) -> None:
        self.names: list[cst.Name] = []
        self.opaque = False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in ("True", "False", "None"):
            self.names.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.opaque = True
        self.walk(node.value)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self.opaque = True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self.opaque = True

    def visit_Arg(self, node: cst.Arg) -> bool:
        self.walk(node.value)
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        if node.default is not None:
            self.walk(node.default)
        return False


def _own_nodes(root: cst.CSTNode, stop: tuple[type, ...]) -> Iterator[cst.CSTNode]:
    """``root`` and the nodes under it in source order, not entering nodes of ``stop``
    types below ``root`` (they are yielded, their insides are not)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if node is root or not isinstance(node, stop):
            stack.extend(reversed(walk.children(node)))


def _returns(owner: cst.FunctionDef) -> list[cst.Return]:
    return [
        n
        for n in _own_nodes(owner, (cst.FunctionDef, cst.Lambda))
        if isinstance(n, cst.Return) and n.value is not None
    ]


def _tests(body: cst.CSTNode) -> list[cst.BaseExpression]:
    # Not even ``body`` itself is entered when it is a def or class.
    if isinstance(body, cst.FunctionDef | cst.ClassDef):
        return []
    return [
        n.test for n in _own_nodes(body, (cst.FunctionDef, cst.ClassDef)) if isinstance(n, cst.If)
    ]
