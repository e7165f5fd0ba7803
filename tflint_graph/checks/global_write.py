from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.model import walk
from tflint_graph.model.autograph import is_graph_loop
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.state import restored_on_exit
from tflint_graph.model.tensors import tensors
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
        """
import tensorflow as tf

@tf.function
def penalty(weights):
    total = 0.0  # made afresh by each trace, which consumes it: per-trace scratch

    def add(w):
        nonlocal total
        total += tf.reduce_sum(tf.abs(w))

    for i in range(3):  # a Python loop: unrolled while tracing
        add(weights[i])
    return total
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
                and not self._local_of_the_trace(name, fn)
            ):
                kind = "global" if self._is_global(name) else "nonlocal"
                self.report(
                    name,
                    f"write to {kind} {name.value} runs only while tracing {fn.where}; later "
                    f"calls never update it; keep it in a tf.Variable and .assign() to it",
                    fn,
                )

    def _owners(self, name: cst.Name) -> set[cst.CSTNode | None]:
        return {a.scope.node for a in self.ctx.bindings(name)}

    def _is_global(self, name: cst.Name) -> bool:
        return all(not isinstance(o, cst.FunctionDef) for o in self._owners(name))

    def _local_of_the_trace(self, name: cst.Name, fn: TracedFunction) -> bool:
        """A ``nonlocal`` of a function that is traced itself (an accumulator its nested
        helper adds to): made afresh on each trace and consumed by it, per-trace scratch, as
        long as the owner only calls the helper in straight-line code or Python loops (a
        graph loop runs the helper's Python once, while tracing)."""
        owners = self._owners(name)
        if len(owners) != 1:
            return False
        owner = next(iter(owners))
        helper = fn.node
        if (
            not isinstance(owner, cst.FunctionDef)
            or owner is helper
            or not isinstance(helper, cst.FunctionDef)
            or self.ctx.enclosing_function(helper) is not owner
        ):
            return False
        traced = self.ctx.traced.get(owner)
        if traced is None:
            return False
        definitions = traced_of(self.ctx).definitions
        uses = [
            n
            for n in walk.descendants(owner.body)
            if isinstance(n, cst.Name) and n.value == helper.name.value and n is not helper.name
        ]
        for use in uses:
            call = self.ctx.parent(use)
            if not (isinstance(call, cst.Call) and call.func is use):
                return False  # handed on: to `tf.while_loop`, `tf.map_fn`, a closure...
            for loop in self.ctx.ancestors(use):
                if loop is owner or loop is helper:
                    break  # a recursive call runs where the helper runs
                if isinstance(loop, cst.FunctionDef | cst.Lambda):
                    return False
                if isinstance(loop, cst.For | cst.While) and is_graph_loop(
                    self.ctx, loop, traced, tensors(self.ctx, traced), definitions
                ):
                    return False
                if (
                    isinstance(loop, cst.If | cst.IfExp)
                    and traced.autograph
                    and tensors(self.ctx, traced).is_tensor(loop.test)
                ):
                    return False  # a tensor `if` becomes a tf.cond: its branch runs once
        return bool(uses)

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
