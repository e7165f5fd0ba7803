from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.state import restored_on_exit
from tflint_graph.model.values import declared_outer_names, target_names
from tflint_graph.traced import traced_of


class GlobalWrite(Rule):
    """A `global`/`nonlocal` variable written in traced code changes only while tracing."""

    code = "TFG105"
    name = "global-write"
    QUIET_IN_TESTS = True

    VALID = [
        """
import tensorflow as tf

counter = tf.Variable(0)

@tf.function
def step(x):
    counter.assign_add(1)
    return x
""",
        """
import tensorflow as tf

steps = 0

def train(ds, step):
    global steps
    for x in ds:
        step(x)
        steps += 1  # eager: fine
""",
        """
import tensorflow as tf

total = 0

@tf.function
def step(x):
    global total
    return x + total  # read only (see TFG109 for reassigned globals)
""",
    ]
    INVALID = [
        """
import tensorflow as tf

steps = 0

@tf.function
def step(x):
    global steps
    steps += 1  # TFG105
    return x * 2
""",
        """
import tensorflow as tf

def make_counter():
    calls = 0

    @tf.function
    def count(x):
        nonlocal calls
        calls = calls + 1  # TFG105
        return x

    return count
""",
    ]

    def _check(self, names: Iterable[cst.Name], fn: TracedFunction) -> None:
        declared = declared_outer_names(self.ctx, fn.node)
        if not declared:
            return
        for name in names:
            if (
                name.value in declared
                and not traced_of(self.ctx).setup.covers(name, fn)
                and not restored_on_exit(self.ctx, name, fn.node)
            ):
                self.report(
                    name,
                    f"write to global {name.value} runs only while tracing {fn.where}; later "
                    f"calls never update it; keep it in a tf.Variable and .assign() to it",
                    fn,
                )

    def visit_Assign(self, node: cst.Assign, fn: TracedFunction) -> None:
        for t in node.targets:
            self._check(target_names(t.target), fn)

    def visit_AugAssign(self, node: cst.AugAssign, fn: TracedFunction) -> None:
        self._check(target_names(node.target), fn)

    def visit_AnnAssign(self, node: cst.AnnAssign, fn: TracedFunction) -> None:
        if node.value is not None:
            self._check(target_names(node.target), fn)

    def visit_For(self, node: cst.For, fn: TracedFunction) -> None:
        self._check(target_names(node.target), fn)

    def visit_WithItem(self, node: cst.WithItem, fn: TracedFunction) -> None:
        if node.asname is not None:
            self._check(target_names(node.asname.name), fn)

    def visit_NamedExpr(self, node: cst.NamedExpr, fn: TracedFunction) -> None:
        self._check(target_names(node.target), fn)

    def visit_Del(self, node: cst.Del, fn: TracedFunction) -> None:
        self._check(target_names(node.target), fn)
