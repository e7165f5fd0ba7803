"""TFG201: Python truth tests of symbolic tensors (SPEC §2, TFG2xx).

Where Python itself asks a tensor for its truth value, tracing raises
``OperatorNotAllowedInGraphError``: ``bool(t)`` always; the ``if`` clause of a comprehension
and ``assert`` always (AutoGraph converts neither); ``if``/``while``/ternaries/``and``/``or``/
``not`` and chained comparisons only where AutoGraph is off (``autograph=False``,
``do_not_convert`` and their callees).  AutoGraph turns those into ``tf.cond``,
``tf.while_loop`` and ``tf.logical_*`` everywhere else, so they are fine there.
"""

from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.core.finding import Severity
from tflint_graph.model.autograph import convert_advice, converts, not_converted
from tflint_graph.model.certain import certain_tensors
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.tensors import Kind, tensors
from tflint_graph.traced import traced_of

_ERROR = "OperatorNotAllowedInGraphError"


def _none_comparison(expr: cst.BaseExpression) -> bool:
    """``t == None`` / ``t != None``: TensorFlow answers with a Python bool."""
    if not isinstance(expr, cst.Comparison):
        return False
    operands = [expr.left, *(c.comparator for c in expr.comparisons)]
    return all(isinstance(c.operator, cst.Equal | cst.NotEqual) for c in expr.comparisons) and any(
        isinstance(o, cst.Name) and o.value == "None" for o in operands
    )


def truth_tensor(ctx: ModuleContext, fn: TracedFunction, expr: cst.BaseExpression) -> bool:
    """``expr`` is a symbolic tensor (a bare parameter only where a signature or annotation
    says so: ``step(x, True)`` passes a Python flag)."""
    if _none_comparison(expr) or tensors(ctx, fn).kind(expr) is not Kind.TENSOR:
        return False
    if (
        isinstance(expr, cst.Name)
        and certain_tensors(ctx, fn, traced_of(ctx).definitions).kind(expr) is not Kind.TENSOR
    ):
        return not any(isinstance(a.node, cst.Param) for a in ctx.bindings(expr))
    return True


class TensorAsBool(Rule):
    """A symbolic tensor used as a Python bool raises OperatorNotAllowedInGraphError."""

    code = "TFG201"
    name = "tensor-as-bool"
    RAISES_WHILE_TRACING = True
    severity = Severity.ERROR

    VALID = [
        """
import tensorflow as tf

@tf.function
def step(x, training=False):
    if x > 0:  # converted by AutoGraph into tf.cond
        x = x - 1
    while tf.reduce_sum(x) > 10:
        x = x / 2
    y = x if x > 0 else -x
    if training and x.shape[0] > 1:  # Python flag, static shape
        y = y * 2
    if x is None or not training:
        return y
    return tf.cond(x > 0, lambda: x, lambda: -x)
""",
        """
import tensorflow as tf

@tf.function
def step(x):
    tf.debugging.assert_positive(x)
    values = [v for v in [1, 2, 3] if v > 1]  # a Python comprehension
    return bool(values) and x
""",
        """
import tensorflow as tf

@tf.function(autograph=False)
def step(x, flag):
    if flag:  # a bare parameter may be a Python flag: step(x, True)
        return x
    return tf.cond(x > 0, lambda: x, lambda: -x)
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    if bool(x > 0):  # TFG201
        return x
    return -x
""",
        """
import tensorflow as tf

@tf.function(autograph=False)
def step(x):
    if x > 0:  # TFG201
        return x
    return -x
""",
        """
import tensorflow as tf

@tf.function
def step(x):
    assert tf.reduce_all(x > 0)  # TFG201
    return [i for i in range(3) if x[i] > 0]  # TFG201
""",
    ]

    # -- always: Python asks for the truth value whatever AutoGraph does ----------------
    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        if not self.ctx.resolve(node.func).is_builtin("bool"):
            return
        if len(node.args) != 1 or node.args[0].star or node.args[0].keyword is not None:
            return
        if self._tested(node.args[0].value, fn) is not None and self._live(node, fn):
            self.report(
                node,
                f"bool({self.quote(node.args[0].value)}) raises {_ERROR} while tracing "
                f"{fn.where}: "
                "a symbolic tensor has no Python truth value; "
                "use tf.cond, tf.where or tf.reduce_any/tf.reduce_all",
                fn,
            )

    def visit_Assert(self, node: cst.Assert, fn: TracedFunction) -> None:
        if fn.autograph and fn.autograph_features & {"ALL", "ASSERT_STATEMENTS"}:
            return  # AutoGraph's ASSERT_STATEMENTS feature turns assert into tf.debugging.Assert
        tested = self._tested(node.test, fn)
        if tested is not None and self._live(node, fn):
            self.report(
                tested,
                f"`assert {self.quote(node.test)}` asks a symbolic tensor for its truth "
                f"value and raises {_ERROR} while tracing {fn.where} (AutoGraph does not "
                "convert assert); use tf.debugging.assert_* or tf.debugging.Assert",
                fn,
            )

    def visit_CompIf(self, node: cst.CompIf, fn: TracedFunction) -> None:
        tested = self._tested(node.test, fn)
        if tested is not None and self._live(node, fn):
            self.report(
                tested,
                f"the comprehension condition `{self.quote(node.test)}` is a symbolic "
                f"tensor and raises {_ERROR} while tracing {fn.where} (AutoGraph does not "
                "convert comprehensions); use tf.boolean_mask or tf.where",
                fn,
            )

    # -- only where AutoGraph is off ----------------------------------------------------
    def visit_If(self, node: cst.If, fn: TracedFunction) -> None:
        self._off(node.test, fn, "if", "tf.cond")

    def visit_While(self, node: cst.While, fn: TracedFunction) -> None:
        self._off(node.test, fn, "while", "tf.while_loop")

    def visit_IfExp(self, node: cst.IfExp, fn: TracedFunction) -> None:
        self._off(node.test, fn, "... if ... else ...", "tf.where or tf.cond")

    def visit_UnaryOperation(self, node: cst.UnaryOperation, fn: TracedFunction) -> None:
        if isinstance(node.operator, cst.Not):
            self._off(node.expression, fn, "not", "tf.logical_not")

    def visit_BooleanOperation(self, node: cst.BooleanOperation, fn: TracedFunction) -> None:
        word = "and" if isinstance(node.operator, cst.And) else "or"
        self._off(node.left, fn, word, f"tf.logical_{word}")

    def visit_Comparison(self, node: cst.Comparison, fn: TracedFunction) -> None:
        """``a < t < b`` is ``(a < t) and (t < b)``: the first result is truth-tested."""
        if converts(fn) or len(node.comparisons) < 2:
            return
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        for i, comp in enumerate(node.comparisons[:-1]):
            if isinstance(comp.operator, cst.Is | cst.IsNot | cst.In | cst.NotIn):
                continue
            pair = operands[i : i + 2]
            if isinstance(comp.operator, cst.Equal | cst.NotEqual) and any(
                isinstance(o, cst.Name) and o.value == "None" for o in pair
            ):
                continue
            if any(truth_tensor(self.ctx, fn, o) for o in pair):
                if self._live(node, fn):
                    self.report(
                        node,
                        f"the chained comparison `{self.quote(node)}` asks a symbolic "
                        f"tensor for its truth value and raises {_ERROR} while tracing "
                        f"{fn.where}: {not_converted(fn)}; combine two comparisons with "
                        "tf.logical_and",
                        fn,
                    )
                return

    # -- helpers ------------------------------------------------------------------------
    def _off(self, test: cst.BaseExpression, fn: TracedFunction, what: str, use: str) -> None:
        if converts(fn):
            return
        tested = self._tested(test, fn)
        if tested is not None and self._live(test, fn):
            self.report(
                tested,
                f"`{what}` on the symbolic tensor `{self.quote(tested)}` raises {_ERROR} "
                f"while tracing {fn.where}: {not_converted(fn)}; use {use}, or "
                f"{convert_advice(fn)}",
                fn,
            )

    def _tested(self, expr: cst.BaseExpression, fn: TracedFunction) -> cst.BaseExpression | None:
        """The tensor sub-expression whose truth value Python takes when it truth-tests
        ``expr``, or None when that value is a Python one."""
        converted = converts(fn)
        if isinstance(expr, cst.BooleanOperation):
            if converted and self._tested(expr.left, fn) is not None:
                return expr  # AutoGraph's and_/or_ give tf.logical_and/or: a tensor
            if (
                not converted
                and self._tested(expr.left, fn) is not None
                and not self._bare_parameter(expr.left)
            ):
                # `bool(left)` raises first: reported at the operator.  A bare parameter may
                # be a Python value on another call, which then tests the right side.
                return None
            # Otherwise the result may be the right operand.
            return self._tested(expr.right, fn)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            if converted and self._tested(expr.expression, fn) is not None:
                return expr  # AutoGraph's not_ gives tf.logical_not: a tensor
            return None  # a Python bool (or the operand already raised)
        return expr if truth_tensor(self.ctx, fn, expr) else None

    def _bare_parameter(self, expr: cst.BaseExpression) -> bool:
        found = self.ctx.bindings(expr) if isinstance(expr, cst.Name) else []
        return bool(found) and all(isinstance(a.node, cst.Param) for a in found)

    def _live(self, node: cst.CSTNode, fn: TracedFunction) -> bool:
        return not traced_of(self.ctx).guards.untraced(node, fn.node)
