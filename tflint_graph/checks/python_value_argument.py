"""TFG303: a tf.function called with a Python value that changes on every iteration.

tf.function keys its graph cache on the *values* of Python arguments (numbers, strings,
bools, and the Python scalars inside lists, tuples and dicts), so ``for epoch in range(n):
step(x, epoch)`` traces ``n`` graphs.  Verified with TensorFlow 2.21
(``experimental_get_tracing_count()``): a ``range`` counter, ``float(i)``, ``i * 2``, an
f-string of it, a ``step += 1`` counter, an ``enumerate`` index, a list holding one: one trace
per value; ``reduce_retracing=True`` changes nothing (it relaxes tensor shapes only); an
``input_signature`` converts the int to a tensor (one trace); ``tf.constant(i)`` and NumPy
scalars never retrace on value; the same literal at every call traces once.
"""

from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import ModuleRule
from tflint_graph.checks.messages import shorten
from tflint_graph.core.finding import Severity
from tflint_graph.core.vocabulary import COUNTING_ITERABLES, PASS_THROUGH_ITERABLES
from tflint_graph.model import walk
from tflint_graph.model.calls import argument
from tflint_graph.model.certain import indexes_python_sequence
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.scopes import ImportAssignment
from tflint_graph.model.values import assigned_value, module_constant
from tflint_graph.traced import traced_of
from tflint_graph.traced.callsites import (
    TfFunctionRef,
    call_sites,
    callback_hook,
    loops_around,
    tf_function_calls,
)

# Builtins that turn a Python scalar into another Python scalar.
_SCALAR_BUILTINS = frozenset({"int", "float", "str", "round", "abs", "min", "max"})
_ARITHMETIC = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Modulo,
    cst.Power,
)
_ARITHMETIC_AUG = (
    cst.AddAssign,
    cst.SubtractAssign,
    cst.MultiplyAssign,
    cst.DivideAssign,
    cst.FloorDivideAssign,
    cst.ModuloAssign,
    cst.PowerAssign,
)

# What the analysis answers for an expression: None when it is not surely a Python scalar
# (or container of them); otherwise the loops (and callback hooks) in which it changes from
# one iteration to the next -- empty for a constant.
Loops = frozenset[cst.CSTNode]
_CONSTANT: Loops = frozenset()


class PythonValueArgument(ModuleRule):
    """A tf.function called with a Python value that changes per call retraces for each value."""

    code = "TFG303"
    name = "python-value-argument"
    severity = Severity.WARNING
    QUIET_IN_TESTS = True

    VALID = [
        """
import tensorflow as tf

@tf.function
def step(x, training=False):
    return x * 2.0

x = tf.ones([2])
for epoch in range(10):
    step(x, training=True)  # the same literal every time: one trace
    step(x, tf.constant(epoch))  # a tensor: traced once
for batch in tf.data.Dataset.range(4):
    step(batch)  # dataset elements are tensors
""",
        """
import tensorflow as tf

@tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int64)])
def step(x, epoch):
    return x * tf.cast(epoch, tf.float32)

x = tf.ones([2])
for epoch in range(10):
    step(x, epoch)  # the signature converts the int to a tensor
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def step(x, epoch):
    return x * 2.0

x = tf.ones([2])
for epoch in range(10):
    step(x, epoch)  # TFG303
""",
        """
import tensorflow as tf

@tf.function(reduce_retracing=True)
def step(x, lr):
    return x * lr

x = tf.ones([2])
global_step = 0
for batch in tf.data.Dataset.range(4):
    step(x, lr=0.1 * 0.9 ** global_step)  # TFG303
    global_step += 1
""",
    ]

    def check(self) -> None:
        for call, ref in tf_function_calls(self.ctx):
            culprits = varying_arguments(self.ctx, call, ref)
            if culprits:
                self._report(call, ref.info.display, ref.info.reduce_retracing, culprits)

    def _report(
        self,
        call: cst.Call,
        display: str,
        relaxed: bool,
        culprits: list[tuple[cst.Arg, cst.CSTNode]],
    ) -> None:
        arg, region = culprits[0]
        what = shorten(self.ctx.code(arg.value))
        if isinstance(region, cst.FunctionDef):
            hook = region.name.value
            every = "epoch" if "epoch" in hook else "batch"
            why = f"a Python int that Keras passes to {hook}() with a new value every {every}"
        else:
            line = self.ctx.position(region).start.line
            why = f"a Python value that changes on every iteration of the loop at line {line}"
        more = f" (and {len(culprits) - 1} more such argument{'s' if len(culprits) > 2 else ''})"
        more = more if len(culprits) > 1 else ""
        note = (
            " (reduce_retracing=True does not help: it relaxes tensor shapes, not Python values)"
            if relaxed
            else ""
        )
        self.report(
            call,
            f"{display} is called with `{what}`, {why}{more}: tf.function traces a new graph "
            f"for every distinct Python value{note}; pass a tensor (tf.constant({what})) or give "
            f"{display} an input_signature",
            None,
            fix=f"pass tf.constant({what}) instead of {what}",
        )


def varying_arguments(
    ctx: ModuleContext, call: cst.Call, ref: TfFunctionRef
) -> list[tuple[cst.Arg, cst.CSTNode]]:
    """The arguments of a call of a tf.function that are Python values changing from one
    repetition of the call to the next, each with the loop (or Keras hook) it changes in;
    empty when the call retraces on no value (dynamic mode stages these arguments)."""
    if ref.info.signature:
        return []  # Python numbers at TensorSpec positions become tensors
    at = ctx.enclosing_function(call)
    if at is not None and at in ctx.traced:
        return []  # a call from traced code retraces only while its caller traces
    # Where the call repeats, innermost first: its loops, then a Keras hook body.
    regions: list[cst.CSTNode] = list(loops_around(ctx, call))
    if at is not None and callback_hook(ctx, at):
        regions.append(at)
    if not regions:
        return []
    values = _Values(ctx)
    culprits: list[tuple[cst.Arg, cst.CSTNode]] = []
    for arg in call.args:
        if arg.star:
            continue
        loops = values.loops(arg.value, container=True)
        hit = next((r for r in regions if loops and r in loops), None)
        if hit is None:
            continue
        if ref.node is not None and indexes_python_sequence(ctx, ref.node, call, arg):
            continue  # `variables[i]`: a tensor cannot pick a list's item; one trace per item
        culprits.append((arg, hit))
    return culprits


class _Values:
    """Which expressions are Python scalars, and in which loops they change."""

    def __init__(self, ctx: ModuleContext) -> None:
        self.ctx = ctx
        self.traced = traced_of(ctx)
        self._visiting: set[tuple[int, str]] = set()

    def loops(self, expr: cst.BaseExpression, container: bool = False) -> Loops | None:
        if container and isinstance(expr, cst.List | cst.Tuple | cst.Set):
            return self._container(el.value for el in expr.elements)
        if container and isinstance(expr, cst.Dict):
            return self._container(
                el.value for el in expr.elements if isinstance(el, cst.DictElement)
            )
        return self._scalar(expr)

    def _container(self, items) -> Loops | None:  # type: ignore[no-untyped-def]
        # A varying Python scalar anywhere in the structure changes the cache key, whatever
        # the other items are (tensors included).
        found: set[cst.CSTNode] = set()
        for item in items:
            if isinstance(item, cst.StarredElement):
                continue
            loops = self.loops(item, container=True)
            if loops:
                found |= loops
        return frozenset(found)

    def _scalar(self, expr: cst.BaseExpression) -> Loops | None:
        if isinstance(expr, cst.BaseNumber | cst.SimpleString | cst.ConcatenatedString):
            return _CONSTANT
        if isinstance(expr, cst.FormattedString):
            parts = [
                self._scalar(p.expression)
                for p in expr.parts
                if isinstance(p, cst.FormattedStringExpression)
            ]
            return None if any(p is None for p in parts) else _union(parts)  # type: ignore[arg-type]
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return _CONSTANT
            return self._name(expr)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
            left, right = self._scalar(expr.left), self._scalar(expr.right)
            return None if left is None or right is None else left | right
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus | cst.Plus):
            return self._scalar(expr.expression)
        if isinstance(expr, cst.Call) and any(
            self.ctx.resolve(expr.func).is_builtin(b) for b in _SCALAR_BUILTINS
        ):
            if not expr.args or any(a.star or a.keyword is not None for a in expr.args):
                return None
            parts = [self._scalar(a.value) for a in expr.args]
            return None if any(p is None for p in parts) else _union(parts)  # type: ignore[arg-type]
        return None

    def _name(self, name: cst.Name) -> Loops | None:
        bindings = self.ctx.bindings(name)
        if not bindings or any(isinstance(a, ImportAssignment) for a in bindings):
            return None
        scope = self.ctx.scope(name)
        key = (id(scope), name.value)
        if key in self._visiting:
            return _CONSTANT  # `n = n + 1`: the self-reference is handled by the caller
        self._visiting.add(key)
        try:
            found: set[cst.CSTNode] = set()
            for a in bindings:
                loops = self._binding(a.node, name.value)
                if loops is None:
                    return None
                found |= loops
            return frozenset(found)
        finally:
            self._visiting.discard(key)

    def _binding(self, node: cst.CSTNode, name: str) -> Loops | None:
        """The loops in which one binding of ``name`` gives it a new Python value."""
        if isinstance(node, cst.Param):
            return self._hook_param(node) or self._number_param(node)
        if not isinstance(node, cst.Name):
            return None
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.AssignTarget):
            stmt = self.ctx.parent(parent)
            if not isinstance(stmt, cst.Assign) or parent.target is not node:
                return None  # `a, b = ...`: unknown
            value = self._scalar(stmt.value)
            if value is None:
                return None
            if _mentions(stmt.value, name):  # `n = n + 1`
                return value | frozenset(loops_around(self.ctx, stmt))
            return value
        if isinstance(parent, cst.AnnAssign) and parent.target is node:
            return self._scalar(parent.value) if parent.value is not None else None
        if isinstance(parent, cst.AugAssign) and parent.target is node:
            if not isinstance(parent.operator, _ARITHMETIC_AUG):
                return None
            value = self._scalar(parent.value)
            if value is None:
                return None
            return value | frozenset(loops_around(self.ctx, parent))
        return self._loop_target(node)

    def _loop_target(self, node: cst.Name) -> Loops | None:
        """A ``for`` (or comprehension) target that receives Python ints."""
        child: cst.CSTNode = node
        for anc in self.ctx.ancestors(node):
            if isinstance(anc, cst.For | cst.CompFor):
                if child is not anc.target:
                    return None
                if node in self._int_targets(anc.target, anc.iter):
                    return frozenset({anc})
                return None
            if not isinstance(anc, cst.Tuple | cst.List | cst.Element | cst.StarredElement):
                return None
            child = anc
        return None

    def _int_targets(self, target: cst.BaseExpression, it: cst.BaseExpression) -> set[cst.Name]:
        """Names of a loop target that receive Python ints from iterating ``it``."""
        while isinstance(it, cst.Call) and self._res(it.func).is_(*PASS_THROUGH_ITERABLES):
            if not it.args or it.args[0].keyword is not None or it.args[0].star:
                return set()
            it = it.args[0].value  # tqdm(range(n)), reversed(range(n))
        if _number_sweep(self.ctx, it):
            return {target} if isinstance(target, cst.Name) else set()
        if not isinstance(it, cst.Call):
            return set()
        if self._res(it.func).is_("itertools.product"):
            # `for lr, smoothing in itertools.product(LRS, SMOOTHING)`: each sweep varies.
            pairs = _unpack(target)
            if pairs is None or len(pairs) != len(it.args):
                return set()
            return {
                sub
                for sub, arg in zip(pairs, it.args, strict=True)
                if isinstance(sub, cst.Name)
                and arg.keyword is None
                and not arg.star
                and _number_sweep(self.ctx, arg.value)
            }
        res = self._res(it.func)
        if res.is_builtin("range") or res.is_(*COUNTING_ITERABLES):
            return {target} if isinstance(target, cst.Name) else set()
        pairs = _unpack(target)
        if pairs is None:
            return set()
        if res.is_builtin("enumerate") and len(pairs) == 2 and it.args:
            found = {pairs[0]} if isinstance(pairs[0], cst.Name) else set()
            first = it.args[0]
            if first.keyword is None and not first.star:
                found |= self._int_targets(pairs[1], first.value)
            return found
        if res.is_builtin("zip") and len(pairs) == len(it.args):
            found = set()
            for sub, arg in zip(pairs, it.args, strict=True):
                if arg.star or arg.keyword is not None:
                    return set()
                found |= self._int_targets(sub, arg.value)
            return found
        return set()

    def _hook_param(self, param: cst.Param) -> Loops | None:
        """``epoch`` of ``on_epoch_end(self, epoch, logs)``: a new Python int per call."""
        fn = next(
            (a for a in self.ctx.ancestors(param) if isinstance(a, cst.FunctionDef | cst.Lambda)),
            None,
        )
        if not isinstance(fn, cst.FunctionDef) or callback_hook(self.ctx, fn) is None:
            return None
        params = fn.params.params
        if len(params) >= 2 and params[1] is param:
            return frozenset({fn})
        return None

    def _number_param(self, param: cst.Param) -> Loops | None:
        """``base_lr: float = 0.05``: a parameter annotated ``int``/``float`` holds a Python
        number that stays the same through the call's loops; so does one with a number
        default (``decay=0.5``) that no call of its function in this module passes anything
        but a number (``train(x, decay=tf.constant(0.9))`` passes a tensor)."""
        annotation = param.annotation.annotation if param.annotation is not None else None
        if annotation is not None:
            if isinstance(annotation, cst.Name) and annotation.value in ("int", "float"):
                return _CONSTANT
            return None
        if not _number(param.default):
            return None
        fn = next((a for a in self.ctx.ancestors(param) if isinstance(a, cst.FunctionDef)), None)
        if fn is None or self.ctx.enclosing_class(fn) is not None:
            return None  # a method: the receiver shifts the positions
        params = [*fn.params.posonly_params, *fn.params.params]
        index = params.index(param) if param in params else None
        for _, call in call_sites(self.ctx, fn):
            passed = argument(call, -1 if index is None else index, param.name.value)
            if passed is not None and not _number(passed):
                return None
        return _CONSTANT

    def _res(self, expr: cst.BaseExpression):  # type: ignore[no-untyped-def]
        return self.traced.resolve(expr)


def _number(expr: cst.BaseExpression | None) -> bool:
    """A number literal (``0.5``, ``-1``)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, cst.Integer | cst.Float)


def _number_sweep(ctx: ModuleContext, it: cst.BaseExpression) -> bool:
    """``(0.5, 1.0, 2.0)`` or ``(32, 64, SEQ)``: a literal sweep over distinct numbers (module
    constants count), one trace per value.  Modes such as ``("train", "eval")`` or
    ``(True, False)`` are chosen, not swept."""
    if isinstance(it, cst.Name):
        it = module_constant(ctx, it) or _local_display(ctx, it) or it
    if not isinstance(it, cst.Tuple | cst.List | cst.Set):
        return False
    values = []
    for el in it.elements:
        if el.__class__ is not cst.Element:
            return False
        value = el.value
        if isinstance(value, cst.Name):
            value = module_constant(ctx, value) or value
        if not _number(value):
            return False
        values.append(ctx.code(el.value))
    return len(set(values)) >= 2


def _local_display(ctx: ModuleContext, name: cst.Name) -> cst.BaseExpression | None:
    """``lrs`` in ``lrs = [0.1, 0.01]; for lr in lrs:``: a display that a local name of the
    function is assigned once."""
    found = ctx.bindings(name)
    if len(found) != 1 or not isinstance(found[0].node, cst.Name):
        return None
    value = assigned_value(ctx, found[0].node, with_items=False)
    return value if isinstance(value, cst.Tuple | cst.List | cst.Set) else None


def _unpack(target: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(target, cst.Tuple | cst.List):
        if any(isinstance(el, cst.StarredElement) for el in target.elements):
            return None
        return [el.value for el in target.elements]
    return None


def _union(parts: list[Loops]) -> Loops:
    found: set[cst.CSTNode] = set()
    for part in parts:
        found |= part
    return frozenset(found)


def _mentions(expr: cst.BaseExpression, name: str) -> bool:
    return any(
        type(n) is cst.Name and n.value == name  # type: ignore[attr-defined]
        for n in (expr, *walk.descendants(expr))
    )
