from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.variable_creation import (
    constructs_variable,
    created_once,
    creator_decides,
    is_self_weight_call,
)
from tflint_graph.model.context import TracedFunction
from tflint_graph.traced import traced_of


class VariableCreatedPerTrace(Rule):
    """A tf.Variable created unconditionally in traced code makes tf.function raise ValueError."""

    code = "TFG205"
    name = "variable-created-per-trace"
    RAISES_WHILE_TRACING = True

    VALID = [
        """
import tensorflow as tf

class Scale(tf.Module):
    def __init__(self):
        self.v = None

    @tf.function
    def __call__(self, x):
        if self.v is None:
            self.v = tf.Variable(tf.ones_like(x))
        return self.v * x
""",
        """
import tensorflow as tf

class Counter(tf.Module):
    def __init__(self):
        self.count = tf.Variable(0)

    @tf.function
    def __call__(self, x):
        self.count.assign_add(1)
        return x

weights = tf.Variable(tf.zeros([3]))
""",
        """
import tensorflow as tf

class Bias(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.b = self.add_weight(shape=input_shape[-1:], initializer="zeros")

    def call(self, x):
        if not hasattr(self, "scale"):
            self.scale = self.add_weight(shape=(), initializer="ones")
        return x * self.scale + self.b
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    v = tf.Variable(1.0)  # TFG205
    return v * x
""",
        """
import tensorflow as tf

class Bias(tf.keras.layers.Layer):
    def call(self, x):
        b = self.add_weight(shape=x.shape[-1:], initializer="zeros")  # TFG205
        return x + b
""",
        """
import tensorflow as tf

@tf.function
def step(x, training=True):
    if training:
        noise = tf.Variable(tf.zeros_like(x))  # TFG205
        x = x + noise
    return x
""",
    ]

    def _in_keras_class(self, fn: TracedFunction) -> bool:
        """``fn`` is a method of a Keras layer, model or metric (``self.add_weight`` exists)."""
        node = fn.node
        cls = self.ctx.enclosing_class(node) if isinstance(node, cst.FunctionDef) else None
        traced = traced_of(self.ctx)
        return cls is not None and bool(traced.keras_kinds(cls))

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        if constructs_variable(self.ctx, node):
            shown = "tf.Variable(...)"
            func = self.ctx.code(node.func)
            if func not in ("tf.Variable",):
                shown = f"{func}(...)"
        elif is_self_weight_call(node) and self._in_keras_class(fn):
            assert isinstance(node.func, cst.Attribute)
            shown = f"self.{node.func.attr.value}(...)"
        else:
            return
        if created_once(self.ctx, node, fn) or creator_decides(self.ctx, node, fn):
            return
        self.report(
            node,
            f"{shown} creates a new variable on every trace of {fn.where}: tf.function raises "
            "ValueError (it only supports singleton tf.Variables created on the first call); "
            "create it once outside the traced code (in __init__/build) or lazily under "
            "`if self.v is None:`",
            fn,
        )
