from __future__ import annotations

import re

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.messages import shorten
from tflint_graph.checks.safe_conversion import conversion_is_safe
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.tensors import holds_variable, tensors
from tflint_graph.model.values import assigned_value

# Methods that fetch a stored object rather than compute a new one: what they return may be
# an eager tensor captured from outside the function, whose `.numpy()` works.
_LOOKUPS = frozenset({"get", "pop", "popitem", "setdefault", "copy", "__getitem__"})
# `.numpy()` also exists on PyTorch tensors: in a module that imports torch, only what the
# tensor inference proves is a TensorFlow tensor is reported.
_TORCH = re.compile(r"^\s*(?:import|from)\s+torch\b", re.M)


class TensorNumpy(Rule):
    """`.numpy()` on a symbolic tensor or a `tf.Variable` fails while tracing."""

    code = "TFG202"
    name = "tensor-numpy"
    RAISES_WHILE_TRACING = True

    VALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    tf.print("x =", x)  # printed on every call
    return x * 2

result = step(tf.constant(1.0)).numpy()  # eager: fine
""",
        """
import tensorflow as tf

TABLE = tf.constant([1.0, 2.0])  # an eager tensor, captured while tracing

@tf.function
def step(x):
    if tf.executing_eagerly():
        print(x.numpy())  # only when run eagerly
    scale = TABLE.numpy()  # a captured eager tensor has a value
    return x * scale

@tf.function
def safe(x):
    return tf.py_function(lambda v: v.numpy() * 2, [x], tf.float32)
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    y = tf.square(x)
    return y.numpy()  # TFG202
""",
        """
import tensorflow as tf

class Counter(tf.Module):
    def __init__(self):
        self.count = tf.Variable(0)

    @tf.function
    def __call__(self, x):
        self.count.assign_add(1)
        if self.count.numpy() > 10:  # TFG202
            x = x * 2
        return x
""",
        """
import tensorflow as tf

def to_list(batch):
    return batch.numpy().tolist()  # TFG202

ds = tf.data.Dataset.range(4).map(lambda b: tf.cast(to_list(b), tf.float32))
""",
    ]

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        func = node.func
        if node.args or not isinstance(func, cst.Attribute) or func.attr.value != "numpy":
            return
        receiver = func.value
        what = self._classify(receiver, fn)
        if what is None:
            return
        errors = ("AttributeError", "NotImplementedError")
        if conversion_is_safe(self.ctx, node, fn, errors):
            return
        shown = shorten(self.ctx.code(receiver))
        if what == "tensor" and self._ragged(receiver):
            message = (
                f"{shown}.numpy() raises ValueError while tracing {fn.where}: a symbolic "
                "RaggedTensor has no value until the graph runs; use tf.print() to see it, "
                "return it and call .numpy() on the result, or move the NumPy code into "
                "tf.py_function"
            )
        elif what == "variable":
            message = (
                f"{shown}.numpy() raises NotImplementedError while tracing {fn.where}: "
                "a tf.Variable has no NumPy value inside a graph; use the variable itself "
                f"(or {shown}.read_value()) in TensorFlow ops, tf.print({shown}) to see it, "
                "or call .numpy() outside the tf.function"
            )
        else:
            message = (
                f"{shown}.numpy() raises AttributeError while tracing {fn.where}: "
                "a symbolic tensor has no value until the graph runs; use tf.print() to "
                "see it, return the tensor and call .numpy() on the result, or move the "
                "NumPy code into tf.py_function"
            )
        self.report(node, message, fn)

    # -- what the receiver is ----------------------------------------------------------
    def _classify(self, expr: cst.BaseExpression, fn: TracedFunction) -> str | None:
        ctx = self.ctx
        if holds_variable(ctx, fn, expr):
            return "variable"
        if tensors(ctx, fn).kind(expr) is not None:
            return "tensor"
        if _TORCH.search(ctx.source):
            return None
        return "tensor" if self._computed(expr, fn, set()) else None

    def _ragged(self, expr: cst.BaseExpression) -> bool:
        """Made by a ``tf.ragged.*``/``tf.RaggedTensor.*`` call (``RaggedTensor.numpy()``
        raises ValueError in a graph), directly or through names assigned only that."""
        ctx = self.ctx
        if isinstance(expr, cst.Call):
            return ctx.resolve(expr.func).startswith(
                "tensorflow.ragged.", "tensorflow.RaggedTensor."
            )
        if isinstance(expr, cst.Name):
            values = [assigned_value(ctx, a.node) for a in ctx.bindings(expr)]
            return bool(values) and all(isinstance(v, cst.Call) and self._ragged(v) for v in values)
        return False

    def _computed(self, expr: cst.BaseExpression, fn: TracedFunction, seen: set[str]) -> bool:
        """``expr`` is computed inside this traced call (a parameter, an op or call result,
        or a local assigned only such values), so it cannot be an eager tensor captured
        from outside: only those have a ``.numpy()`` that works while tracing."""
        if isinstance(expr, cst.Call):
            return self._fresh_call(expr)
        if isinstance(expr, cst.Subscript):
            return self._computed(expr.value, fn, seen)
        if isinstance(expr, cst.BinaryOperation):
            return True
        if not isinstance(expr, cst.Name) or expr.value in seen:
            return False
        seen.add(expr.value)
        ctx = self.ctx
        found = ctx.bindings(expr)
        own = ctx.function_scope(fn.node)
        if not found or any(a.scope is not own for a in found):
            return False  # a global or closure: may be an eager tensor made outside
        for a in found:
            node = a.node
            if isinstance(node, cst.Param):
                if not self._tensor_param(node, fn):
                    return False
                continue
            if isinstance(ctx.parent(node), cst.AugAssign):
                continue
            value = assigned_value(ctx, node) or _unpacked_from(ctx, node)
            if value is None or not self._computed(value, fn, seen):
                return False
        return True

    def _tensor_param(self, p: cst.Param, fn: TracedFunction) -> bool:
        node = fn.node
        if p.star in ("*", "**"):
            return False
        if p.default is not None and not (
            isinstance(p.default, cst.Name) and p.default.value == "None"
        ):
            return False  # a default value (maybe an eager tensor) may be what is used
        if isinstance(node, cst.FunctionDef) and self.ctx.enclosing_class(node) is not None:
            first = (list(node.params.posonly_params) + list(node.params.params))[:1]
            if first and first[0] is p:
                return False  # self / cls
        return True

    def _fresh_call(self, call: cst.Call) -> bool:
        res = self.ctx.resolve(call.func)
        if res.imported:
            # TensorFlow and Keras calls inside a graph never return an eager tensor;
            # builtins (getattr, next) and other libraries may hand back a stored one.
            return res.startswith("tensorflow.", "keras.")
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _LOOKUPS:
            return False
        return isinstance(func, cst.Name | cst.Attribute)


def _unpacked_from(ctx: ModuleContext, target: cst.CSTNode) -> cst.BaseExpression | None:
    """``value`` for a name bound by ``a, b = value``."""
    parent = ctx.parent(target)
    if not isinstance(parent, cst.Element):
        return None
    holder = ctx.parent(parent)
    if not isinstance(holder, cst.Tuple | cst.List):
        return None
    return assigned_value(ctx, holder)
