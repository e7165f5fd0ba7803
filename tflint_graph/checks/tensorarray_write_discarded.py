from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.fixing import Site
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.loop_vars import loop_var_values
from tflint_graph.model.values import values_of
from tflint_graph.traced import traced_of

# TensorArray methods that return the updated array (the receiver is left unchanged in a graph).
_WRITES = frozenset({"write", "scatter", "unstack", "split"})


class TensorArrayWriteDiscarded(Rule):
    """A TensorArray write used as a statement is lost in a graph: keep the returned array."""

    code = "TFG209"
    name = "tensorarray-write-discarded"
    FIX_SAFETY = "safe"

    VALID = [
        """
import tensorflow as tf

@tf.function
def squares(n):
    ta = tf.TensorArray(tf.float32, size=n)
    for i in tf.range(n):
        ta = ta.write(i, tf.cast(i * i, tf.float32))
    return ta.stack()
""",
        """
import tensorflow as tf

def eager_fill(values):
    ta = tf.TensorArray(tf.float32, size=len(values))
    for i, v in enumerate(values):
        ta.write(i, v)  # eager: the array is updated in place
    return ta

@tf.function
def split_words(line):
    parts = tf.strings.split(line)
    words = "a,b".split(",")  # a str, not a TensorArray
    return parts
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def squares(n):
    ta = tf.TensorArray(tf.float32, size=n)
    for i in tf.range(n):
        ta.write(i, tf.cast(i * i, tf.float32))  # TFG209
    return ta.stack()
""",
        """
import tensorflow as tf

def fill(ta: tf.TensorArray, x):
    ta.unstack(x)  # TFG209
    return ta

ds = tf.data.Dataset.range(3).map(
    lambda i: fill(tf.TensorArray(tf.int64, size=1), [i]).stack()
)
""",
    ]

    def _is_tensor_array(self, expr: cst.BaseExpression, fn: TracedFunction) -> bool:
        """``expr`` holds a ``tf.TensorArray``: built by ``tf.TensorArray(...)``, returned by a
        previous write, or a parameter annotated ``tf.TensorArray``."""
        memo: dict[cst.CSTNode, bool] = self.ctx.memo("tensor-arrays", fn.node, dict)
        if expr in memo:
            return memo[expr]
        memo[expr] = False  # cuts cycles: `ta = ta.write(i, v)`
        memo[expr] = self._compute(expr, fn)
        return memo[expr]

    def _compute(self, expr: cst.BaseExpression, fn: TracedFunction) -> bool:
        ctx = self.ctx
        if isinstance(expr, cst.Call):
            func = expr.func
            if ctx.resolve(func).is_("tensorflow.TensorArray"):
                return True
            return (
                isinstance(func, cst.Attribute)
                and func.attr.value in _WRITES
                and self._is_tensor_array(func.value, fn)
            )
        if isinstance(expr, cst.Name):
            for a in ctx.bindings(expr):
                node = a.node
                if not isinstance(node, cst.Param):
                    continue
                if node.annotation is not None and ctx.resolve(node.annotation.annotation).is_(
                    "tensorflow.TensorArray"
                ):
                    return True
                # `def body(i, ta)` given to `tf.while_loop(cond, body, [0, ta])`.
                given = loop_var_values(traced_of(ctx).definitions, node)
                if any(self._is_tensor_array(v, fn) for v in given):
                    return True
        if isinstance(expr, cst.Name | cst.Attribute):
            return any(self._is_tensor_array(v, fn) for v in values_of(ctx, expr, fn))
        return False

    def visit_Expr(self, node: cst.Expr, fn: TracedFunction) -> None:
        call = node.value
        if not isinstance(call, cst.Call):
            return
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _WRITES:
            return
        receiver = func.value
        if not self._is_tensor_array(receiver, fn):
            return
        method = func.attr.value
        code = self.ctx.code(call)
        if isinstance(receiver, cst.Name | cst.Attribute):
            shown = self.ctx.code(receiver)
            fix: str | None = f"{shown} = {code}"
            label, original, keep = f"{shown}.{method}()", shown, f"write `{fix}`"
        else:
            fix = None
            label, original = f"TensorArray.{method}()", "the original"
            keep = "assign the returned TensorArray and use it"
        self.report(
            call,
            f"the TensorArray that {label} returns is discarded in {fn.where}: in a graph "
            f"{method}() leaves {original} unchanged and returns the updated array, so the "
            f"write is lost; {keep}",
            fn,
            fix=fix,
        )

    @classmethod
    def fix(
        cls,
        node: cst.CSTNode,
        updated: cst.CSTNode,
        site: Site,
        suggestion: str | None = None,
    ) -> cst.CSTNode | None:
        """``ta.write(i, v)`` as a statement -> ``ta = ta.write(i, v)`` (also ``scatter``,
        ``unstack``, ``split``), only when the receiver is a plain name: rebinding
        ``self.ta`` is not a local change."""
        if not isinstance(node, cst.Call) or not isinstance(updated, cst.Call):
            return None
        func = node.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return None
        return cst.Assign(
            targets=[cst.AssignTarget(target=cst.Name(func.value.value))], value=updated
        )
