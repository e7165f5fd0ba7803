from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.messages import shorten
from tflint_graph.core.finding import Severity
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.scopes import GlobalScope
from tflint_graph.model.values import int_literal
from tflint_graph.traced import traced_of


class LargeUnrolledLoop(Rule):
    """A Python `for` over a long `range(N)` or literal in traced code is unrolled N times."""

    code = "TFG305"
    name = "large-unrolled-loop"
    severity = Severity.INFO

    VALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    for i in tf.range(1000):
        x = x + 1.0
    for i in range(10):  # small: unrolling is fine
        x = x * 2.0
    return x
""",
        """
import tensorflow as tf

N = 1000
N = 2000  # assigned twice: not a constant

@tf.function
def step(x, n):
    for i in range(N):
        x = x + 1.0
    for i in range(n):  # a tensor: AutoGraph makes a tf.while_loop
        x = x + 1.0
    return x

def eager(x):
    for i in range(1000):  # eager code
        x = x + 1
    return x
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    for i in range(1000):  # TFG305
        x = x + 1.0
    return x
""",
        """
import tensorflow as tf

STEPS = 500

@tf.function(autograph=False)
def step(x):
    for i in range(STEPS):  # TFG305
        x = x + 1.0
    for v in [0.1, 0.2, 0.3]:  # short literal: fine
        x = x * v
    for i in range(100, 1000, 3):  # TFG305
        x = x + 1.0
    return x
""",
    ]

    def visit_For(self, node: cst.For, fn: TracedFunction) -> None:
        if node.asynchronous is not None or traced_of(self.ctx).guards.untraced(node, fn.node):
            return
        count = self._count(node.iter)
        limit = self.ctx.config.unroll_max
        if count is None or count <= limit:
            return
        what = shorten(self.ctx.code(node.iter))
        if not fn.autograph:
            hint = "with AutoGraph off, write a tf.while_loop"
        elif isinstance(node.iter, cst.Call):
            hint = f"use tf.range({count}) so that it becomes one tf.while_loop"
        else:
            hint = "keep the values in a tensor and loop over it (one tf.while_loop)"
        self.report(
            node,
            f"{'AutoGraph' if fn.autograph else 'Tracing'} unrolls `for ... in {what}` in "
            f"{fn.where} into {count} copies of the "
            f"loop body (more than unroll-max={limit}): slow tracing and a huge graph; {hint}",
            fn,
            fix=f"loop over tf.range({count}) (or a tensor) instead of a Python sequence",
        )

    def _count(self, expr: cst.BaseExpression) -> int | None:
        """How many times a Python ``for`` over ``expr`` runs, when that is certain."""
        if isinstance(expr, cst.List | cst.Tuple):
            if any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return None
            return len(expr.elements)
        if not isinstance(expr, cst.Call) or not self.ctx.resolve(expr.func).is_builtin("range"):
            return None
        if not 1 <= len(expr.args) <= 3:
            return None
        values: list[int] = []
        for arg in expr.args:
            if arg.keyword is not None or arg.star:
                return None
            value = self._int(arg.value)
            if value is None:
                return None
            values.append(value)
        if len(values) == 3 and values[2] == 0:
            return None
        return len(range(*values))

    def _int(self, expr: cst.BaseExpression, depth: int = 0) -> int | None:
        """An int literal, a negated one, or a module-level name assigned one exactly once."""
        literal = int_literal(expr)
        if literal is not None:
            return literal
        if isinstance(expr, cst.Name) and depth == 0:
            found = self.ctx.bindings(expr)
            if len(found) != 1 or not isinstance(found[0].scope, GlobalScope):
                return None
            target = found[0].node
            target_parent = self.ctx.parent(target)
            if not isinstance(target_parent, cst.AssignTarget):
                return None
            stmt = self.ctx.parent(target_parent)
            if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1:
                return None
            if target_parent.target is not target:
                return None  # `N, M = ...`
            return self._int(stmt.value, depth + 1)
        return None
