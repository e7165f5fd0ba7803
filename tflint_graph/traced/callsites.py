"""Which expressions are ``tf.function`` objects, and where they are called.

The retracing rules (TFG302, TFG303, TFG304, TFG403) judge *calls* of tf.functions, in any
code, eager or traced.  A call's target may be a decorated function of this module, a name
bound to ``tf.function(fn, ...)``, an attribute ``self.step = tf.function(self._step)``, or
a tf.function imported from another module of the run (``ctx.view.tf_functions``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tflint_graph.core.facts import TfFunction
from tflint_graph.model import walk
from tflint_graph.model.calls import argument, is_true
from tflint_graph.model.context import FunctionNode, ModuleContext
from tflint_graph.model.scopes import ImportAssignment
from tflint_graph.model.values import assigned_value, calls_in
from tflint_graph.traced.code import traced_of


@dataclass(frozen=True, slots=True)
class TfFunctionRef:
    """A tf.function a call reaches: its summary, and, when defined in this module, the
    Python function it wraps and the calls whose keywords configure it."""

    info: TfFunction
    node: FunctionNode | None = None
    options: tuple[cst.Call, ...] = ()

    def keyword(self, name: str) -> cst.BaseExpression | None:
        """The value of ``name=`` in the first configuring call that passes it."""
        return _kw(self.options, name)


def _given(expr: cst.BaseExpression | None) -> bool:
    return expr is not None and not (isinstance(expr, cst.Name) and expr.value == "None")


def _kw(options: tuple[cst.Call, ...], *names: str) -> cst.BaseExpression | None:
    """The first of ``names=`` passed by the first configuring call that passes one."""
    for call in options:
        found = argument(call, -1, *names)
        if found is not None:
            return found
    return None


def _ref(
    ctx: ModuleContext,
    qualname: str,
    display: str,
    node: FunctionNode | None,
    options: tuple[cst.Call, ...],
    anchor: cst.CSTNode,
) -> TfFunctionRef:
    info = TfFunction(
        qualname=qualname,
        display=display,
        signature=_given(_kw(options, "input_signature")),
        jit_compile=is_true(_kw(options, "jit_compile", "experimental_compile")),
        reduce_retracing=is_true(_kw(options, "reduce_retracing", "experimental_relax_shapes")),
        origin=ctx.path,
        line=ctx.line(anchor),
    )
    return TfFunctionRef(info, node, options)


_OPTIMIZER_USE = frozenset({"apply_gradients", "minimize", "apply"})


def variable_roles(
    fn: cst.FunctionDef,
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(the positional parameters of ``fn``, its parameters that hold variable owners): one
    it calls ``apply_gradients``/``minimize``/``apply`` on is an ``optimizer``; when the body
    applies gradients, any parameter it mentions may be the ``model`` they belong to.  One
    tf.function called with two different such objects creates variables on a later trace
    (TFG208)."""
    params = fn.params
    positional = tuple(p.name.value for p in (*params.posonly_params, *params.params))
    names = (*positional, *(p.name.value for p in params.kwonly_params))
    calls = list(calls_in(fn.body))
    applied = {
        c.func.value.value
        for c in calls
        if isinstance(c.func, cst.Attribute)
        and c.func.attr.value in _OPTIMIZER_USE
        and isinstance(c.func.value, cst.Name)
    }
    applies = any(
        isinstance(c.func, cst.Attribute) and c.func.attr.value in ("apply_gradients", "minimize")
        for c in calls
    )
    mentioned = (
        {n.value for n in walk.descendants(fn.body) if type(n) is cst.Name}  # type: ignore[attr-defined]
        if applies
        else set()
    )
    roles = tuple((n, "optimizer") for n in names if n in applied)
    roles += tuple((n, "model") for n in names if n in mentioned)
    return positional, roles


def decorated(ctx: ModuleContext, fn: cst.FunctionDef) -> TfFunctionRef | None:
    """``fn`` decorated with ``@tf.function`` / ``@tf.function(...)`` (or a configured
    project wrapper): the tf.function its name is bound to."""
    return ctx.memo("tf-function-def", fn, lambda: _decorated(ctx, fn))


def _decorated(ctx: ModuleContext, fn: cst.FunctionDef) -> TfFunctionRef | None:
    traced = traced_of(ctx)
    for dec in fn.decorators:
        options = traced.tf_function_options(dec.decorator)
        if options is not None:
            display = f"{fn.name.value}()"
            return _ref(ctx, _qualname(ctx, fn), display, fn, tuple(options), fn)
    return None


def wrapped(
    ctx: ModuleContext, value: cst.BaseExpression, name: str, at: FunctionNode | None
) -> TfFunctionRef | None:
    """``value`` is ``tf.function(fn, ...)`` (or ``xla(fn)``, ``tf.function(**kw)(fn)``)."""
    if not isinstance(value, cst.Call):
        return None
    traced = traced_of(ctx)
    options = traced.tf_function_options(value.func)
    if options is None or not value.args or value.args[0].keyword is not None:
        return None
    node = next((f for f, _ in traced.callables(value.args[0].value, at)), None)
    inner = ctx.code(value.args[0].value) if node is None else None
    display = f"{inner or name}()"
    return _ref(ctx, name, display, node, (value, *options), value)


def _qualname(ctx: ModuleContext, fn: cst.FunctionDef) -> str:
    cls = ctx.enclosing_class(fn)
    return f"{cls.name.value}.{fn.name.value}" if cls is not None else fn.name.value


def tf_function_of(
    ctx: ModuleContext, expr: cst.BaseExpression, at: FunctionNode | None
) -> TfFunctionRef | None:
    """The tf.function that calling ``expr`` calls, if ``expr`` surely denotes one.

    ``at`` is the function holding the expression (for ``self``)."""
    if not ctx.view.tf_functions and not traced_of(ctx).definitions.names_tf_function:
        return None  # no tf.function here or imported: no call of one
    return ctx.memo("tf-function-of", expr, lambda: _tf_function_of(ctx, expr, at))


def _tf_function_of(
    ctx: ModuleContext, expr: cst.BaseExpression, at: FunctionNode | None
) -> TfFunctionRef | None:
    traced = traced_of(ctx)
    if isinstance(expr, cst.Name):
        bindings = ctx.bindings(expr)
        if all(isinstance(a, ImportAssignment) for a in bindings):
            return _imported(ctx, expr)
        for a in bindings:
            node = a.node
            if isinstance(node, cst.FunctionDef):
                found = decorated(ctx, node)
                if found is not None and len(bindings) == 1:
                    return found
            elif isinstance(node, cst.Name) and len(bindings) == 1:
                value = traced.assigned_value(node)
                if value is not None:
                    scope_at = ctx.enclosing_function(node)
                    return wrapped(ctx, value, expr.value, scope_at)
        return None
    if isinstance(expr, cst.Attribute):
        methods = traced.methods_of(expr, at)
        if methods:
            method = methods[0]
            return decorated(ctx, method) if isinstance(method, cst.FunctionDef) else None
        values = traced.attribute_values(expr, at)
        if len(values) == 1:
            value, owner = values[0]
            return wrapped(ctx, value, f"self.{expr.attr.value}", owner)
        if not values:
            return _imported(ctx, expr)
    return None


def _imported(ctx: ModuleContext, expr: cst.BaseExpression) -> TfFunctionRef | None:
    """A tf.function that another module of the run defines and this one imports."""
    if not ctx.view.tf_functions:
        return None
    for name in imported_names(ctx, expr):
        info = ctx.view.tf_functions.get(name)
        if info is not None:
            return TfFunctionRef(info)
    return None


def imported_names(ctx: ModuleContext, expr: cst.BaseExpression) -> list[str]:
    """Absolute names in other modules that ``expr`` denotes: an imported name
    (``step``, ``model.step``), or a method of an instance of an imported class
    (``trainer.step`` with ``trainer = Trainer(...)`` bound once)."""
    res = ctx.resolve(expr)
    if not res.local:
        return sorted(
            {n for n in map(ctx.view.absolute, res.imported) if ctx.view.may_be_project(n)}
        )
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        return [f"{cls}.{expr.attr.value}" for cls in instance_classes(ctx, expr.value)]
    return []


def instance_classes(ctx: ModuleContext, expr: cst.BaseExpression) -> list[str]:
    """Absolute names of the imported class ``expr`` is surely an instance of:
    ``Encoder(...)``, or a name bound once to such a call."""
    if isinstance(expr, cst.Name):
        found = ctx.bindings(expr)
        if len(found) != 1 or not isinstance(found[0].node, cst.Name):
            return []
        value = assigned_value(ctx, found[0].node, with_items=False)
        if value is None:
            return []
        expr = value
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Name | cst.Attribute):
        return []
    owner = ctx.resolve(expr.func)
    if owner.local:
        return []
    return sorted({n for n in map(ctx.view.absolute, owner.imported) if ctx.view.may_be_project(n)})


def module_tf_functions(ctx: ModuleContext) -> dict[str, TfFunction]:
    """The tf.functions other modules can import from this one: module-level decorated
    functions and module-level names bound to ``tf.function(...)``."""
    found: dict[str, TfFunction] = {}
    for stmt in ctx.module.body:
        if isinstance(stmt, cst.FunctionDef):
            ref = decorated(ctx, stmt)
            if ref is not None:
                found[stmt.name.value] = _with_roles(ref)
        elif isinstance(stmt, cst.ClassDef):
            # Decorated methods: `enc = Encoder(); enc.encode(x)` in another module.
            for item in stmt.body.body:
                if isinstance(item, cst.FunctionDef):
                    ref = decorated(ctx, item)
                    if ref is not None:
                        found[f"{stmt.name.value}.{item.name.value}"] = ref.info
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name):
                        ref = wrapped(ctx, small.value, target.value, None)
                        if ref is not None:
                            found[target.value] = _with_roles(ref)
    return found


def _with_roles(ref: TfFunctionRef) -> TfFunction:
    """A module-level tf.function as other modules see it, with its parameters' roles (read
    here, once per module, not at every call site that looks the function up)."""
    if not isinstance(ref.node, cst.FunctionDef):
        return ref.info
    params, roles = variable_roles(ref.node)
    return dataclasses.replace(ref.info, params=params, roles=roles)


def tf_function_calls(ctx: ModuleContext) -> Iterator[tuple[cst.Call, TfFunctionRef]]:
    """Every call of a known tf.function in the module, eager or traced, in source order."""

    def compute() -> list[tuple[cst.Call, TfFunctionRef]]:
        found = []
        # Trace discovery already walked every call of the module, with its function.
        for at, call in traced_of(ctx).facts.calls:
            ref = tf_function_of(ctx, call.func, at)
            if ref is not None:
                found.append((call, ref))
        return found

    yield from ctx.memo("tf-function-calls", ctx.module, compute)


# -- repetition: loops, callers, Keras callback hooks (TFG302, TFG303) -----------------

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)

# Keras calls these once per epoch or per batch, with the epoch / batch index as a Python
# int in the first parameter after ``self``.
CALLBACK_HOOKS = frozenset(
    {
        "on_epoch_begin",
        "on_epoch_end",
        "on_batch_begin",
        "on_batch_end",
        "on_train_batch_begin",
        "on_train_batch_end",
        "on_test_batch_begin",
        "on_test_batch_end",
        "on_predict_batch_begin",
        "on_predict_batch_end",
    }
)


def loops_around(ctx: ModuleContext, node: cst.CSTNode) -> list[cst.CSTNode]:
    """The loops that run ``node`` once per iteration, innermost first: ``For``/``While``
    whose body holds it and the ``CompFor`` clauses of a comprehension around it.  Stops at
    the enclosing def, lambda or class (their bodies run when called, not per iteration)."""

    def compute() -> list[cst.CSTNode]:
        found: list[cst.CSTNode] = []
        child = node
        for anc in ctx.ancestors(node):
            if isinstance(anc, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                break
            if isinstance(anc, cst.For | cst.While) and child is anc.body:
                found.append(anc)
            elif isinstance(anc, cst.CompFor) and child is not anc.iter and child is not anc.target:
                found.append(anc)  # its `if`s or an inner `for` clause
            elif isinstance(anc, _COMPREHENSIONS) and child is not anc.for_in:
                clauses: list[cst.CSTNode] = []
                clause: cst.CompFor | None = anc.for_in
                while clause is not None:
                    clauses.append(clause)
                    clause = clause.inner_for_in
                found += reversed(clauses)  # the element runs in every clause
            child = anc
        return found

    return ctx.memo("loops-around", node, compute)


def call_sites(ctx: ModuleContext, fn: FunctionNode) -> list[tuple[FunctionNode | None, cst.Call]]:
    """Calls in this module that call the module function ``fn``, with their function."""

    def compute() -> dict[FunctionNode, list[tuple[FunctionNode | None, cst.Call]]]:
        traced = traced_of(ctx)
        index: dict[FunctionNode, list[tuple[FunctionNode | None, cst.Call]]] = {}
        for at, call in traced.facts.calls:
            targets = {f for f, _ in traced.callables(call.func, at)}
            for target in targets:
                index.setdefault(target, []).append((at, call))
        return index

    return ctx.memo("call-sites", ctx.module, compute).get(fn, [])


def callback_hook(ctx: ModuleContext, fn: FunctionNode) -> str | None:
    """``fn``'s name when it is a per-epoch or per-batch hook (``on_epoch_end``,
    ``on_train_batch_end``, ...) of a subclass of ``keras.callbacks.Callback``."""
    if not isinstance(fn, cst.FunctionDef) or fn.name.value not in CALLBACK_HOOKS:
        return None
    cls = ctx.enclosing_class(fn)
    if cls is None or not _keras_callback(ctx, cls, frozenset()):
        return None
    return fn.name.value


def _keras_callback(ctx: ModuleContext, cls: cst.ClassDef, seen: frozenset[cst.ClassDef]) -> bool:
    traced = traced_of(ctx)
    for arg in cls.bases:
        if arg.keyword is None and traced.resolve(arg.value).startswith("keras.callbacks."):
            return True
    return any(
        base not in seen and _keras_callback(ctx, base, seen | {cls})
        for base in traced.module_bases(cls)
    )
