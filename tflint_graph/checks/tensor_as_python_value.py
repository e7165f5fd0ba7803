"""TFG203: symbolic tensors used where Python needs a concrete value (SPEC §2, TFG2xx).

Iterating or unpacking a symbolic tensor outside an AutoGraph-converted ``for`` statement
raises ``OperatorNotAllowedInGraphError``; a tensor used as a Python list/tuple index or a
dict key raises ``TypeError``.  ``int()``, ``float()``, ``len()``, ``range()`` and ``for v
in t`` are converted by AutoGraph and fail only where it is off.  Only certain tensors count
(``model.certain``): unpacking a structure such as Keras ``call`` inputs, a
``tf.data`` element or a bare ``tf.function`` parameter (which may be a tuple) is fine.
"""

from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.core.finding import Severity
from tflint_graph.model.autograph import convert_advice, converts, not_converted
from tflint_graph.model.certain import certain_tensors, maybe_number
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.tensors import Kind
from tflint_graph.model.values import assigned_value, attribute_values
from tflint_graph.traced import traced_of

_ITER = "OperatorNotAllowedInGraphError"

# Builtins that iterate their (first) argument, and what to use on a tensor instead.
_ITERATING = {
    "list": "tf.unstack(t) or keep the tensor",
    "tuple": "tf.unstack(t) or keep the tensor",
    "set": "tf.unique(t)",
    "frozenset": "tf.unique(t)",
    "any": "tf.reduce_any(t)",
    "all": "tf.reduce_all(t)",
    "sum": "tf.reduce_sum(t)",
    "max": "tf.reduce_max(t) or tf.maximum(a, b)",
    "min": "tf.reduce_min(t) or tf.minimum(a, b)",
    "enumerate": "tf.range(tf.shape(t)[0]) with t[i], or tf.unstack(t)",
    "zip": "tf.stack/tf.unstack, or index both tensors with tf.range",
    "iter": "tf.unstack(t)",
    "map": "tf.map_fn or tf.vectorized_map",
    "filter": "tf.boolean_mask",
}
# Converted by AutoGraph, so a problem only where it is off.
_CONVERTED = {
    "int": ("TypeError", "tf.cast(t, tf.int32)"),
    "float": ("TypeError", "tf.cast(t, tf.float32)"),
    "len": ("TypeError", "tf.shape(t)[0] (or t.shape[0] for a static size)"),
    "range": ("TypeError", "tf.range"),
    "sorted": (_ITER, "tf.sort(t)"),
}
_DICT_CALLS = ("collections.OrderedDict", "collections.defaultdict")
# Builtins that take a Python number as well as a tensor would be refused (a number made from
# an unproven parameter may be what the calls pass); iterating one fails either way.
_NUMBERS_WORK = frozenset({"max", "min", "int", "float", "range"})


class TensorAsPythonValue(Rule):
    """Iterating, unpacking or indexing Python containers with a symbolic tensor fails."""

    code = "TFG203"
    name = "tensor-as-python-value"
    RAISES_WHILE_TRACING = True
    severity = Severity.ERROR

    VALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    a, b = tf.unstack(tf.reshape(x, [2, -1]))  # a Python list of tensors
    rows = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    for v in tf.reshape(x, [-1]):  # converted by AutoGraph
        rows = rows.write(rows.size(), v * 2.0)
    n = len(x) + int(tf.reduce_sum(x))  # converted by AutoGraph
    h, w = x.shape[0], x.shape[-1]  # static dimensions
    return rows.stack(), a + b, n, h, w
""",
        """
import tensorflow as tf

class Net(tf.keras.Model):
    def call(self, inputs):
        image, mask = inputs  # Keras inputs may be a list of tensors
        return image * mask

    def train_step(self, data):
        x, y = data
        return {"loss": tf.reduce_mean(self(x) - y)}
""",
        """
import tensorflow as tf

@tf.function
def step(batch):
    x, y = batch  # called as step((x, y)): a tuple of tensors
    return x + y
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    h, w = tf.shape(x)  # TFG203
    return [v * 2 for v in tf.reshape(x, [-1])]  # TFG203
""",
        """
import tensorflow as tf

WEIGHTS = [0.1, 0.2, 0.7]

@tf.function
def step(x):
    total = tf.zeros([])
    for i in tf.range(3):
        total += WEIGHTS[i] * x  # TFG203
    return total
""",
        """
import tensorflow as tf

@tf.function(autograph=False)
def step(x: tf.Tensor):
    n = int(tf.reduce_sum(x))  # TFG203
    return any(x > n)  # TFG203
""",
    ]

    # -- unpacking --------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign, fn: TracedFunction) -> None:
        for target in node.targets:
            self._unpack(target.target, node.value, fn)

    def _unpack(
        self, target: cst.BaseExpression, value: cst.BaseExpression, fn: TracedFunction
    ) -> None:
        if not isinstance(target, cst.Tuple | cst.List):
            return
        if isinstance(value, cst.Tuple | cst.List):
            inner = [el.value for el in value.elements]
            names = [el.value for el in target.elements]
            starred = any(isinstance(el, cst.StarredElement) for el in value.elements)
            if not starred and len(inner) == len(names):
                for t, v in zip(names, inner, strict=True):
                    self._unpack(t, v, fn)
            return
        if isinstance(value, cst.Call) and self.ctx.resolve(value.func).startswith(
            "tensorflow.raw_ops."
        ):
            return  # raw ops with several outputs return a named tuple
        if self._annotated_parameter(value, fn):
            # `x, mask = inputs` with `inputs: tf.Tensor`: unpacking a tensor fails on the
            # first trace, so the author passes a tuple there and the annotation is loose
            # (Keras hands nested inputs over as they are).
            return
        if self._tensor(value, fn) and self._live(value, fn):
            self.report(
                value,
                f"unpacking the symbolic tensor `{self.quote(value)}` into "
                f"`{self.quote(target)}` raises {_ITER} while tracing {fn.where}: a "
                "tensor cannot be iterated in Python; use tf.unstack(...) or index it "
                "(t[0], t[1])",
                fn,
                fix="a, b = tf.unstack(t)",
            )

    def _annotated_parameter(self, value: cst.BaseExpression, fn: TracedFunction) -> bool:
        """``value`` is a parameter of ``fn`` that only its annotation makes a tensor (no
        ``input_signature``)."""
        if not isinstance(value, cst.Name) or fn.input_signature is not None:
            return False
        found = self.ctx.bindings(value)
        return bool(found) and all(
            isinstance(a.node, cst.Param) and a.node.annotation is not None for a in found
        )

    def visit_For(self, node: cst.For, fn: TracedFunction) -> None:
        if not self._tensor(node.iter, fn) or not self._live(node, fn):
            return
        if not converts(fn):
            self.report(
                node.iter,
                f"`for ... in {self.quote(node.iter)}` iterates a symbolic tensor and "
                f"raises {_ITER} while tracing {fn.where}: {not_converted(fn)}; use "
                f"tf.range with t[i], tf.map_fn, or {convert_advice(fn)}",
                fn,
            )
        elif isinstance(node.target, cst.Tuple | cst.List):
            self.report(
                node.target,
                f"unpacking each element of the symbolic tensor `{self.quote(node.iter)}` "
                f"into `{self.quote(node.target)}` raises {_ITER} while tracing "
                f"{fn.where}: AutoGraph converts the loop, not the unpacking; loop over one "
                "name and index it (row[0], row[1])",
                fn,
            )

    def visit_Arg(self, node: cst.Arg, fn: TracedFunction) -> None:
        if node.star == "*" and self._tensor(node.value, fn) and self._live(node, fn):
            self.report(
                node,
                f"`*{self.quote(node.value)}` iterates a symbolic tensor and raises "
                f"{_ITER} while tracing {fn.where}; pass tf.unstack(...) or the tensor itself",
                fn,
            )

    def visit_StarredElement(self, node: cst.StarredElement, fn: TracedFunction) -> None:
        if self._in_target(node):
            return
        if self._tensor(node.value, fn) and self._live(node, fn):
            self.report(
                node,
                f"`*{self.quote(node.value)}` iterates a symbolic tensor and raises "
                f"{_ITER} while tracing {fn.where}; use tf.unstack(...) or tf.concat",
                fn,
            )

    # -- iteration ----------------------------------------------------------------------
    def visit_CompFor(self, node: cst.CompFor, fn: TracedFunction) -> None:
        if self._tensor(node.iter, fn) and self._live(node, fn):
            self.report(
                node.iter,
                f"a comprehension over the symbolic tensor `{self.quote(node.iter)}` "
                f"raises {_ITER} while tracing {fn.where} (AutoGraph does not convert "
                "comprehensions); use a vectorized op, tf.map_fn or a converted `for` loop "
                "with tf.TensorArray",
                fn,
            )

    def visit_Comparison(self, node: cst.Comparison, fn: TracedFunction) -> None:
        for comp in node.comparisons:
            if isinstance(comp.operator, cst.In | cst.NotIn) and self._tensor(comp.comparator, fn):
                if self._live(node, fn):
                    self.report(
                        node,
                        f"`in {self.quote(comp.comparator)}` iterates a symbolic tensor "
                        f"and raises TypeError while tracing {fn.where}; use "
                        "tf.reduce_any(tf.equal(t, value))",
                        fn,
                    )
                return

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        res = self.ctx.resolve(node.func)
        builtin = next(
            (n for n in (*_ITERATING, *_CONVERTED, "reversed") if res.is_builtin(n)), None
        )
        if builtin is not None:
            self._builtin_call(node, builtin, fn)
            return
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("get", "pop", "setdefault")
            and node.args
            and not node.args[0].star
            and self._container(func.value, fn) == "dict"
            and self._key(node.args[0].value, fn)
            and self._live(node, fn)
        ):
            self._report_key(node.args[0].value, "dict key", fn)

    def _builtin_call(self, node: cst.Call, builtin: str, fn: TracedFunction) -> None:
        args = [a.value for a in node.args if not a.star and a.keyword is None]
        if not args or len(args) != len(node.args) - _keywords(node):
            return
        if builtin in ("map", "filter"):
            checked = args[1:]
        elif builtin in ("zip", "range", "max", "min"):
            checked = args  # max(a, b) compares; max(t) iterates
        else:
            checked = args[:1]
        tensor = next((a for a in checked if self._tensor(a, fn)), None)
        if tensor is None or not self._live(node, fn):
            return
        if builtin in _NUMBERS_WORK and any(self._maybe_number(a, fn) for a in checked):
            return  # `min(1.0, (epoch + 1) / 5)`: the calls may pass a Python number
        name = self.quote(tensor)
        if builtin in _CONVERTED:
            if converts(fn):
                return
            error, use = _CONVERTED[builtin]
            self.report(
                node,
                f"{builtin}() of the symbolic tensor `{name}` raises {error} while tracing "
                f"{fn.where}: {not_converted(fn)}; use {use}",
                fn,
            )
        elif builtin == "reversed":
            self.report(
                node,
                f"reversed() of the symbolic tensor `{name}` raises TypeError while tracing "
                f"{fn.where}; use tf.reverse(t, axis=[0])",
                fn,
            )
        elif builtin in ("max", "min") and len(args) > 1:
            self.report(
                node,
                f"{builtin}() compares the symbolic tensor `{name}` in Python and raises "
                f"{_ITER} while tracing {fn.where}; use tf.{builtin}imum(a, b)",
                fn,
            )
        else:
            self.report(
                node,
                f"{builtin}() iterates the symbolic tensor `{name}` and raises {_ITER} while "
                f"tracing {fn.where}; use {_ITERATING[builtin]}",
                fn,
            )

    # -- tensors as list indices and dict keys ----------------------------------------
    def visit_Subscript(self, node: cst.Subscript, fn: TracedFunction) -> None:
        kind = self._container(node.value, fn)
        if kind is None:
            return
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                if self._key(index.value, fn) and self._live(node, fn):
                    what = "dict key" if kind == "dict" else f"Python {kind} index"
                    self._report_key(index.value, what, fn)
            elif kind != "dict":
                for part in (index.lower, index.upper, index.step):
                    if part is not None and self._key(part, fn) and self._live(node, fn):
                        self._report_key(part, f"Python {kind} slice bound", fn)

    def visit_Dict(self, node: cst.Dict, fn: TracedFunction) -> None:
        for element in node.elements:
            if (
                isinstance(element, cst.DictElement)
                and self._key(element.key, fn)
                and self._live(node, fn)
            ):
                self._report_key(element.key, "dict key", fn)

    def _report_key(self, index: cst.BaseExpression, what: str, fn: TracedFunction) -> None:
        if what == "dict key":
            why, use = "a tensor is unhashable", "a tf.lookup.StaticHashTable, or tensor.ref()"
        else:
            why, use = "Python needs an int", "tf.gather(tf.constant(values), i) or tf.stack"
        self.report(
            index,
            f"the symbolic tensor `{self.quote(index)}` used as a {what} raises TypeError "
            f"while tracing {fn.where} ({why}); use {use}",
            fn,
        )

    def _key(self, expr: cst.BaseExpression, fn: TracedFunction) -> bool:
        """A tensor, or (with AutoGraph, which turns them into tf.cast) int(t)/float(t)."""
        if self._tensor(expr, fn):
            return True
        if isinstance(expr, cst.Call) and converts(fn) and len(expr.args) == 1:
            res = self.ctx.resolve(expr.func)
            if res.is_builtin("int") or res.is_builtin("float"):
                arg = expr.args[0]
                return not arg.star and arg.keyword is None and self._tensor(arg.value, fn)
        return False

    def _container(
        self, expr: cst.BaseExpression, fn: TracedFunction, depth: int = 0
    ) -> str | None:
        """ "list", "tuple" or "dict" when ``expr`` certainly holds that Python container."""
        if isinstance(expr, cst.List | cst.ListComp):
            return "list"
        if isinstance(expr, cst.Tuple):
            return "tuple"
        if isinstance(expr, cst.Dict | cst.DictComp):
            return "dict"
        if isinstance(expr, cst.Call):
            res = self.ctx.resolve(expr.func)
            if res.is_builtin("list") or res.is_builtin("tuple"):
                return "list" if res.is_builtin("list") else "tuple"
            if res.is_builtin("dict") or res.is_(*_DICT_CALLS):
                return "dict"
            if (
                certain_tensors(self.ctx, fn, traced_of(self.ctx).definitions).kind(expr)
                is Kind.SEQUENCE
            ):
                return "sequence"  # `tf.unstack(t)`: a Python list of tensors
            return None
        if depth > 3:
            return None
        values: list[cst.BaseExpression] = []
        if isinstance(expr, cst.Name):
            found = self.ctx.bindings(expr)
            if not found or any(isinstance(a.node, cst.Param) for a in found):
                return None
            for a in found:
                value = assigned_value(self.ctx, a.node)
                if value is None:
                    return None
                values.append(value)
        elif isinstance(expr, cst.Attribute):
            values = list(attribute_values(self.ctx, expr, fn))
        kinds = {self._container(v, fn, depth + 1) for v in values}
        if len(kinds) == 1:
            return next(iter(kinds))
        return "sequence" if kinds == {"list", "tuple"} else None

    # -- helpers ------------------------------------------------------------------------
    def _maybe_number(self, expr: cst.BaseExpression, fn: TracedFunction) -> bool:
        inference = certain_tensors(self.ctx, fn, traced_of(self.ctx).definitions)
        return maybe_number(self.ctx, inference, expr)

    def _tensor(self, expr: cst.BaseExpression, fn: TracedFunction) -> bool:
        if isinstance(expr, cst.Comparison) and any(
            isinstance(o, cst.Name) and o.value == "None"
            for o in (expr.left, *(c.comparator for c in expr.comparisons))
        ):
            return False
        return (
            certain_tensors(self.ctx, fn, traced_of(self.ctx).definitions).kind(expr) is Kind.TENSOR
        )

    def _in_target(self, node: cst.CSTNode) -> bool:
        """``node`` is part of an assignment or loop target (``a, *rest = ...``)."""
        child = node
        for anc in self.ctx.ancestors(node):
            if isinstance(anc, cst.AssignTarget):
                return True
            if isinstance(anc, cst.For | cst.CompFor):
                return child is anc.target
            if not isinstance(anc, cst.Tuple | cst.List | cst.StarredElement | cst.Element):
                return False
            child = anc
        return False

    def _live(self, node: cst.CSTNode, fn: TracedFunction) -> bool:
        return not traced_of(self.ctx).guards.untraced(node, fn.node)


def _keywords(node: cst.Call) -> int:
    return sum(1 for a in node.args if a.keyword is not None)
