"""Which parameters of a ``tf.function`` are surely tensors (TFG201, TFG203).

``model.tensors`` takes every bare parameter of a ``tf.function`` (no Python default) for a
tensor.  Rules about unpacking, iterating, truth-testing or converting a value ask a stricter
question: a bare parameter may as well be called with a tuple, a list or a Python number
(``step((x, y))``, ``step(x, 3)``), and all of those work there.  It counts as a tensor only
where something says so:

* an ``input_signature`` ``TensorSpec`` or a ``tf.Tensor`` annotation;
* the body itself, on every call that runs it to the end, reads what a tuple, list, dict or
  number does not have (``x.shape``, ``x.dtype``, ``x.ndim``, ``x.get_shape()``,
  ``x[:, 0]``, ``x[..., 1]``): such an argument is a tensor, or a NumPy array that
  ``tf.function`` turns into one;
* a call in this module passes a tensor: ``step(tf.constant([1.0, 2.0]))``, ``step(images)``
  with ``images = tf.zeros(...)`` or ``np.zeros(...)``, or
  ``step.get_concrete_function(tf.TensorSpec(...))``.  That trace runs with a tensor, whatever
  other callers pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from tflint_graph.model import walk
from tflint_graph.model.calls import argument_keys, binds_self, gets_instance, passed_for
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.tensors import Kind, TensorInference, api_kind, loose_annotation
from tflint_graph.model.values import assigned_value, mentions

# What a tensor has and Python's tuples, lists, dicts and numbers lack.
_TENSOR_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "get_shape"})
# NumPy calls that return an array; tf.function converts a NumPy argument (an array or a
# NumPy scalar) to a tensor (verified with TensorFlow 2.21).
_NUMPY_ARRAYS = frozenset(
    {
        "numpy.array",
        "numpy.asarray",
        "numpy.zeros",
        "numpy.ones",
        "numpy.full",
        "numpy.empty",
        "numpy.arange",
        "numpy.linspace",
        "numpy.zeros_like",
        "numpy.ones_like",
        "numpy.stack",
        "numpy.concatenate",
    }
)
# Where an expression's part runs only sometimes (or later): not evidence for every call.
_SOMETIMES = (
    cst.Lambda,
    cst.FunctionDef,
    cst.ClassDef,
    cst.GeneratorExp,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
)
_MAX_DEPTH = 3


def certain_tensors(
    ctx: ModuleContext, fn: TracedFunction, definitions: Definitions
) -> TensorInference:
    """Like ``model.tensors.tensors``, but a bare parameter of a ``tf.function`` is a tensor
    only with evidence (see the module docstring); otherwise it is a STRUCTURE."""

    def build() -> TensorInference:
        inference = TensorInference(ctx, fn)
        if fn.input_signature is None:
            for p, k in inference.params().items():
                if (
                    k is Kind.TENSOR
                    and not (_annotated_tensor(ctx, p) and not loose_annotation(ctx, fn, p))
                    and not _shown_tensor(ctx, definitions, fn.node, p)
                ):
                    inference.set_param_kind(p, Kind.STRUCTURE)
                    inference.unproven.add(p)
        inference.params_certain = True
        return inference

    return ctx.memo("certain-tensors", fn.node, build)


_NUMBER_BUILTINS = frozenset({"int", "float", "abs", "round", "min", "max"})


def maybe_number(
    ctx: ModuleContext, inference: TensorInference, expr: cst.BaseExpression, depth: int = 0
) -> bool:
    """``expr`` is arithmetic on bare parameters with no evidence of a tensor (``(epoch + 1) /
    5``, also through local names bound only to such values): a Python number whenever the
    calls pass numbers, where ``min()``, ``int()`` and comparisons work while tracing."""
    return _number(ctx, inference, expr, depth) == "param"


def _number(
    ctx: ModuleContext,
    inference: TensorInference,
    expr: cst.BaseExpression,
    depth: int,
    seen: frozenset[cst.CSTNode] = frozenset(),
) -> str:
    """ "param" (a number made from an unproven parameter), "number" (a plain Python number)
    or "" (anything else)."""
    if isinstance(expr, cst.Integer | cst.Float):
        return "number"
    if isinstance(expr, cst.BinaryOperation):
        parts = [_number(ctx, inference, e, depth, seen) for e in (expr.left, expr.right)]
    elif isinstance(expr, cst.UnaryOperation):
        parts = [_number(ctx, inference, expr.expression, depth, seen)]
    elif isinstance(expr, cst.Call) and any(
        ctx.resolve(expr.func).is_builtin(n) for n in _NUMBER_BUILTINS
    ):
        parts = [_number(ctx, inference, a.value, depth, seen) for a in expr.args if not a.star]
    elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        # `config.WARMUP_STEPS`: a setting of an imported module, a Python value while
        # tracing, unless the inference knows it for a tensor.
        res = ctx.resolve(expr)
        if not res.imported or res.local or inference.kind(expr) is Kind.TENSOR:
            return ""
        return "" if res.startswith("tensorflow.", "keras.", "numpy.", "jax.") else "number"
    elif isinstance(expr, cst.Name) and depth < _MAX_DEPTH:
        here = ctx.enclosing_function(expr)
        found = ctx.bindings(expr)
        if not found or all(
            not isinstance(a.node, cst.Param) and ctx.enclosing_function(a.node) is not here
            for a in found
        ):
            # An import, a module constant, a closure's: a Python value while tracing.
            return "" if inference.kind(expr) is Kind.TENSOR else "number"
        parts = []
        for a in found:
            if a.node in seen:
                continue  # `epoch = epoch + 1`: its other bindings decide
            if isinstance(a.node, cst.Param):
                parts.append("param" if a.node in inference.unproven else "")
                continue
            value = assigned_value(ctx, a.node, with_items=False)
            if value is None or ctx.enclosing_function(a.node) is not here:
                return ""
            parts.append(_number(ctx, inference, value, depth + 1, seen | {a.node}))
    else:
        return ""
    if not parts or "" in parts:
        return ""
    return "param" if "param" in parts else "number"


def _annotated_tensor(ctx: ModuleContext, p: cst.Param) -> bool:
    if p.annotation is None:
        return False
    res = ctx.resolve(p.annotation.annotation)
    return res.is_("tensorflow.Tensor", "tensorflow.Variable") or res.startswith(
        "tensorflow.types."
    )


def _shown_tensor(
    ctx: ModuleContext, definitions: Definitions, fn: FunctionNode, param: cst.Param
) -> bool:
    return _used_as_tensor(ctx, fn, param) or passed_a_tensor(ctx, definitions, fn, param)


# -- the body reads what only a tensor has ---------------------------------------------
def _used_as_tensor(ctx: ModuleContext, fn: FunctionNode, param: cst.Param) -> bool:
    """Every run of ``fn``'s body that reaches its end reads a tensor's attribute of
    ``param`` (or indexes it as only an array can be): nothing else gets through."""
    if isinstance(fn, cst.Lambda):
        return _evaluates(ctx, fn.body, param)
    body = fn.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    return _block(ctx, statements, param) is True


def _block(
    ctx: ModuleContext, statements: Sequence[cst.BaseStatement | cst.BaseSuite], param: cst.Param
) -> bool | None:
    """True: the evidence is read on the way through ``statements``; False: not read, and
    the way goes on after them; None: a statement may leave the function first."""
    for stmt in statements:
        if isinstance(stmt, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            if _evaluates(ctx, stmt, param):
                return True
            if any(isinstance(small, cst.Return | cst.Raise) for small in stmt.body):
                return None
            continue
        if isinstance(stmt, cst.FunctionDef | cst.ClassDef):
            continue  # defining runs nothing of the body
        if isinstance(stmt, cst.With):
            if any(_evaluates(ctx, item.item, param) for item in stmt.items):
                return True
            inner = stmt.body
            found = _block(
                ctx, inner.body if isinstance(inner, cst.IndentedBlock) else [inner], param
            )
            if found is not False:
                return found
            continue
        head = stmt.test if isinstance(stmt, cst.If | cst.While) else None
        if isinstance(stmt, cst.For):
            head = stmt.iter
        if head is not None and _evaluates(ctx, head, param):
            return True
        if _may_leave(stmt):
            return None
    return False


def _may_leave(stmt: cst.CSTNode) -> bool:
    """``stmt`` holds a ``return`` or ``raise`` of this function (not of a nested def)."""
    stack: list[cst.CSTNode] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Return | cst.Raise):
            return True
        if isinstance(node, cst.FunctionDef | cst.Lambda | cst.ClassDef):
            continue
        stack.extend(walk.children(node))
    return False


def _evaluates(ctx: ModuleContext, root: cst.CSTNode, param: cst.Param) -> bool:
    """Evaluating ``root`` surely reads a tensor-only attribute or index of ``param``."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, _SOMETIMES):
            continue
        if isinstance(node, cst.IfExp):
            stack.append(node.test)
            continue
        if isinstance(node, cst.BooleanOperation):
            stack.append(node.left)
            continue
        tensor_only = (
            isinstance(node, cst.Attribute) and node.attr.value in _TENSOR_ATTRIBUTES
        ) or (isinstance(node, cst.Subscript) and _array_index(node))
        if tensor_only and _is_param(ctx, node.value, param):  # type: ignore[attr-defined]
            return True
        stack.extend(walk.children(node))
    return False


def _is_param(ctx: ModuleContext, expr: cst.BaseExpression, param: cst.Param) -> bool:
    """``expr`` is a name bound only to ``param`` (never reassigned)."""
    if not isinstance(expr, cst.Name):
        return False
    found = ctx.bindings(expr)
    return len(found) == 1 and found[0].node is param


def _array_index(node: cst.Subscript) -> bool:
    """``t[:, 0]``, ``t[..., 1]``, ``t[...]``: a tuple of indices with a slice or an
    ellipsis, which Python's lists, tuples and dicts reject."""
    parts = [element.slice for element in node.slice]
    ellipsis = any(isinstance(p, cst.Index) and isinstance(p.value, cst.Ellipsis) for p in parts)
    sliced = any(isinstance(p, cst.Slice) for p in parts)
    return ellipsis or (len(parts) > 1 and sliced)


# -- a call in this module passes a tensor ---------------------------------------------
def passed_a_tensor(
    ctx: ModuleContext, definitions: Definitions, fn: FunctionNode, param: cst.Param
) -> bool:
    for site in calls_of(ctx, definitions).get(fn, ()):
        value = passed_for(site.call, fn.params, param, bound=site.bound)
        if value is None or value is param.default:
            continue
        if (site.concrete and _is_spec(ctx, value)) or _evident(ctx, value, 0):
            return True
    return _passed_elsewhere(ctx, fn, param)


def _passed_elsewhere(ctx: ModuleContext, fn: FunctionNode, param: cst.Param) -> bool:
    """A call in another module of the run gives ``param`` an evident tensor
    (``ProjectView.tensor_args``): ``collect(tf.ones([2]), tf.constant(3))`` in a script."""
    if not ctx.view.tensor_args or not isinstance(fn, cst.FunctionDef):
        return False
    cls = ctx.enclosing_class(fn)
    owner = ctx.parent(cls) if cls is not None else ctx.parent(fn)
    if not isinstance(owner, cst.Module):
        return False  # only module-level functions and methods can be imported
    qualname = f"{cls.name.value}.{fn.name.value}" if cls is not None else fn.name.value
    given = ctx.view.tensor_args.get(qualname, frozenset())
    return bool(given & argument_keys(fn, param, gets_instance(ctx, fn)))


def evident_arguments(ctx: ModuleContext, call: cst.Call) -> frozenset[str]:
    """The arguments of ``call`` (``pos:<i>``, ``kw:<name>``) that are surely a tensor or a
    NumPy array wherever the call runs (see ``_evident``); empty after a ``*args``."""
    found: set[str] = set()
    position = 0
    for arg in call.args:
        if arg.star:
            break
        key = f"kw:{arg.keyword.value}" if arg.keyword is not None else f"pos:{position}"
        if arg.keyword is None:
            position += 1
        if _evident(ctx, arg.value, 0):
            found.add(key)
    return frozenset(found)


def passed_python_sequences(
    ctx: ModuleContext, definitions: Definitions, fn: FunctionNode, param: cst.Param
) -> bool:
    """Every call of ``fn`` in the module (one at least) gives ``param`` a Python list or
    tuple: a display, a comprehension, ``list(...)``, or a name bound only to those
    (``images = [train[k] for k in keys]; step(images, ...)``): a ``for`` over it unrolls."""
    sites = calls_of(ctx, definitions).get(fn, ())
    for site in sites:
        value = passed_for(site.call, fn.params, param, bound=site.bound)
        if value is None or value is param.default or not _sequence(ctx, value, 0):
            return False
    return bool(sites) and _only_called(ctx, fn, len(sites))


def indexes_python_sequence(
    ctx: ModuleContext, fn: FunctionNode, call: cst.Call, arg: cst.Arg
) -> bool:
    """The parameter of ``fn`` that ``arg`` of ``call`` fills is an index of a Python list or
    tuple in ``fn``'s body (``variables[i]``, with ``variables`` a list the call passes or a
    global list): only a Python int can pick the item, so each value needs its own trace."""
    if not isinstance(fn, cst.FunctionDef):
        return False
    bound = binds_self(ctx, fn, call.func)
    params = [*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params]
    given = {p.name.value: passed_for(call, fn.params, p, bound=bound) for p in params}
    param = next((p for p in params if given[p.name.value] is arg.value), None)
    if param is None:
        return False
    for node in walk.descendants(fn.body):
        if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
            continue
        index = node.slice[0].slice
        if not (isinstance(index, cst.Index) and _is_param(ctx, index.value, param)):
            continue
        base = node.value
        if not isinstance(base, cst.Name):
            continue
        found = ctx.bindings(base)
        if len(found) == 1 and isinstance(found[0].node, cst.Param):
            value = given.get(found[0].node.name.value)
            if value is not None and _sequence(ctx, value, 0) and not _numbers(ctx, value, 0):
                return True
        elif (
            found
            and all(not isinstance(a.node, cst.Param) for a in found)
            and _sequence(ctx, base, 0)
            and not _numbers(ctx, base, 0)
        ):
            return True
    return False


def _numbers(ctx: ModuleContext, expr: cst.BaseExpression, depth: int) -> bool:
    """A list or tuple of Python numbers (``[0.1 * 0.99**k for k in range(200)]``): one tensor
    could hold it, and ``tf.gather`` pick from it with a tensor index."""
    if isinstance(expr, cst.List | cst.Tuple):
        return bool(expr.elements) and all(_numeric(e.value) for e in expr.elements)
    if isinstance(expr, cst.ListComp):
        return _numeric(expr.elt)
    if isinstance(expr, cst.Name) and depth < _MAX_DEPTH:
        values = [assigned_value(ctx, a.node, with_items=False) for a in ctx.bindings(expr)]
        return bool(values) and all(v is not None and _numbers(ctx, v, depth + 1) for v in values)
    return False


def _numeric(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Integer | cst.Float | cst.Name):
        return True
    if isinstance(expr, cst.BinaryOperation):
        return _numeric(expr.left) and _numeric(expr.right)
    if isinstance(expr, cst.UnaryOperation):
        return _numeric(expr.expression)
    return False


def _only_called(ctx: ModuleContext, fn: FunctionNode, calls: int) -> bool:
    """``fn`` is a function no other module can import (a notebook's, a script's whose name
    is no module name, a private one) and every mention of it is one of its ``calls``: not
    handed to ``strategy.run``, ``ds.map`` or ``functools.partial``, whose calls pass other
    values."""
    if not isinstance(fn, cst.FunctionDef):
        return False
    path = Path(ctx.path)
    importable = path.suffix != ".ipynb" and path.stem.isidentifier()
    if importable and not fn.name.value.startswith("_"):
        return False
    return len(mentions(ctx, fn)) == calls


def _sequence(ctx: ModuleContext, expr: cst.BaseExpression, depth: int) -> bool:
    if isinstance(expr, cst.List | cst.Tuple | cst.ListComp):
        return True
    if isinstance(expr, cst.Call):
        res = ctx.resolve(expr.func)
        return res.is_builtin("list") or res.is_builtin("tuple") or res.is_builtin("sorted")
    if isinstance(expr, cst.Name) and depth < _MAX_DEPTH:
        values = [assigned_value(ctx, a.node, with_items=False) for a in ctx.bindings(expr)]
        return bool(values) and all(v is not None and _sequence(ctx, v, depth + 1) for v in values)
    return False


@dataclass(frozen=True, slots=True)
class Site:
    """A call of a function: ``bound`` when it binds ``self``, ``concrete`` for
    ``step.get_concrete_function(...)`` (whose arguments may be ``tf.TensorSpec``s)."""

    call: cst.Call
    bound: bool
    concrete: bool


def calls_of(ctx: ModuleContext, definitions: Definitions) -> dict[FunctionNode, list[Site]]:
    """Each function of the module with the calls that call it (``step(x)``,
    ``self.step(x)``, ``step.get_concrete_function(spec)``)."""

    def compute() -> dict[FunctionNode, list[Site]]:
        index: dict[FunctionNode, list[Site]] = {}
        for at, call in definitions.facts.calls:
            func = call.func
            concrete = (
                isinstance(func, cst.Attribute) and func.attr.value == "get_concrete_function"
            )
            target = func.value if concrete else func  # type: ignore[union-attr]
            if not isinstance(target, cst.Name | cst.Attribute):
                continue
            for f, _ in definitions.callables(target, at):
                index.setdefault(f, []).append(Site(call, binds_self(ctx, f, target), concrete))
        return index

    return ctx.memo("calls-of-functions", ctx.module, compute)


def _is_spec(ctx: ModuleContext, expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and ctx.resolve(expr.func).is_("tensorflow.TensorSpec")


def _evident(ctx: ModuleContext, expr: cst.BaseExpression, depth: int) -> bool:
    """``expr`` is a tensor or a NumPy value (which tf.function converts to a tensor) wherever
    it is evaluated: a TensorFlow op's result, an array constructor, an item or an arithmetic
    result of one, a name assigned only those."""
    if isinstance(expr, cst.Call):
        res = ctx.resolve(expr.func)
        if not res.imported:
            return False
        return res.is_(*_NUMPY_ARRAYS) or api_kind(expr, res) is Kind.TENSOR
    if isinstance(expr, cst.BinaryOperation):
        return _evident(ctx, expr.left, depth) or _evident(ctx, expr.right, depth)
    if isinstance(expr, cst.Subscript):
        return _evident(ctx, expr.value, depth)
    if isinstance(expr, cst.Name) and depth < _MAX_DEPTH:
        found = ctx.bindings(expr)
        if not found:
            return False
        for a in found:
            value = assigned_value(ctx, a.node, with_items=False)
            if value is None or not _evident(ctx, value, depth + 1):
                return False
        return True
    return False
