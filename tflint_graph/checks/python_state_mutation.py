from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.names import dotted, root_name
from tflint_graph.model.values import inside_guard

# Values whose creation per trace TFG205/TFG208 report; TFG106 leaves them alone.
_VARIABLE_OWNERS = (
    "tensorflow.Variable",
    "keras.layers.",
    "keras.optimizers.",
    "keras.metrics.",
    "keras.Model",
    "keras.Sequential",
    "keras.models.",
)


class PythonStateMutation(Rule):
    """Assigning a Python attribute in traced code happens once per trace, not per call."""

    code = "TFG106"
    name = "python-state-mutation"

    VALID = [
        """
import tensorflow as tf

class Counter(tf.Module):
    def __init__(self):
        self.steps = tf.Variable(0)

    @tf.function
    def __call__(self, x):
        self.steps.assign_add(1)
        return x
""",
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

class Config:
    pass

@tf.function
def step(x):
    cfg = Config()
    cfg.scale = 2.0  # a fresh object of this call
    return x * cfg.scale
""",
    ]
    INVALID = [
        """
import tensorflow as tf

class Model(tf.keras.Model):
    def train_step(self, data):
        self.step_count += 1  # TFG106
        return {}
""",
        """
import tensorflow as tf

class Attention(tf.keras.layers.Layer):
    def call(self, q, k):
        scores = tf.matmul(q, k, transpose_b=True)
        self.last_scores = scores  # TFG106
        return scores
""",
    ]

    def _check(
        self, target: cst.BaseExpression, value: cst.BaseExpression | None, fn: TracedFunction
    ) -> None:
        if not isinstance(target, cst.Attribute):
            if isinstance(target, cst.Tuple | cst.List):  # `self.a, self.b = ...`
                for el in target.elements:
                    self._check(el.value, None, fn)
            return
        root = root_name(target)
        if root is not None and self.ctx.bindings(root) and self.ctx.is_local_to(root, fn.node):
            return  # an object created within this call
        if isinstance(value, cst.Call) and self.ctx.resolve(value.func).startswith(
            *_VARIABLE_OWNERS
        ):
            return  # creating variables or their Keras owners is TFG205's and TFG208's concern
        text = dotted(target) or self.ctx.code(target)
        attr = target.attr.value
        if inside_guard(self.ctx, target, fn.node, (text, f'"{attr}"', f"'{attr}'")):
            return
        self.report(
            target,
            f"assignment to {text} runs only while tracing {fn.where}; later calls do not "
            "update it; keep changing state in a tf.Variable and .assign() to it",
            fn,
        )

    def visit_Assign(self, node: cst.Assign, fn: TracedFunction) -> None:
        for t in node.targets:
            self._check(t.target, node.value, fn)

    def visit_AugAssign(self, node: cst.AugAssign, fn: TracedFunction) -> None:
        self._check(node.target, None, fn)

    def visit_AnnAssign(self, node: cst.AnnAssign, fn: TracedFunction) -> None:
        if node.value is not None:
            self._check(node.target, node.value, fn)
