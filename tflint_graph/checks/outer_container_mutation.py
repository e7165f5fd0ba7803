from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.values import (
    Owner,
    is_container_literal,
    owner_of,
    receiver_is_outer,
    values_of,
)

# Only lists/dicts have these, so any receiver that outlives the call is a container.
_CONTAINER_ONLY = frozenset({"append", "extend", "insert", "setdefault", "popitem"})
# Common on other objects too (`layers.add`, `tracker.update`): need evidence of a container.
_AMBIGUOUS = frozenset({"pop", "remove", "clear", "update", "add", "discard"})


class OuterContainerMutation(Rule):
    """Mutating a Python list, dict or set that outlives the traced call."""

    code = "TFG102"
    name = "outer-container-mutation"

    VALID = [
        """
import tensorflow as tf

@tf.function
def step(xs):
    parts = []
    for i in range(3):
        parts.append(xs[i] * 2)
    return tf.stack(parts)
""",
        """
import tensorflow as tf

history = []

def train(ds, model):
    for x in ds:
        history.append(model(x))  # eager loop: fine
""",
        """
import tensorflow as tf

def parse(features):
    features["image"] = tf.cast(features["image"], tf.float32)
    return features

ds = tf.data.TFRecordDataset("f").map(parse)
""",
        """
import tensorflow as tf

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.blocks = tf.keras.Sequential()

    def call(self, x):
        self.blocks.add(x)  # not known to be a Python container
        return x
""",
    ]
    INVALID = [
        """
import tensorflow as tf

losses = []

@tf.function
def step(x):
    loss = tf.reduce_sum(x)
    losses.append(loss)  # TFG102
    return loss
""",
        """
import tensorflow as tf

class Trainer(tf.Module):
    def __init__(self):
        self.seen = set()
        self.cache = {}

    @tf.function
    def __call__(self, x):
        self.seen.add("call")  # TFG102
        self.cache["last"] = x  # TFG102
        return x
""",
        """
import tensorflow as tf

@tf.function
def step(x, outputs=[]):
    outputs.append(x)  # TFG102
    return x
""",
    ]

    def _known_container(self, receiver: cst.BaseExpression, fn: TracedFunction) -> bool:
        return any(is_container_literal(self.ctx, v) for v in values_of(self.ctx, receiver, fn))

    def _report(self, node: cst.CSTNode, what: str, action: str, fn: TracedFunction) -> None:
        self.report(
            node,
            f"{action} mutates {what} only while tracing {fn.where}; later calls do not "
            "repeat it; return the values as tensors, or use tf.TensorArray or a tf.Variable",
            fn,
        )

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method not in _CONTAINER_ONLY and method not in _AMBIGUOUS:
            return
        receiver = func.value
        what = receiver_is_outer(self.ctx, receiver, fn)
        if what is None:
            return
        if method in _AMBIGUOUS and not self._known_container(receiver, fn):
            return
        self._report(node, what, f".{method}()", fn)

    def _check_item_target(self, target: cst.BaseExpression, fn: TracedFunction) -> None:
        if not isinstance(target, cst.Subscript):
            return
        receiver = target.value
        what = receiver_is_outer(self.ctx, receiver, fn)
        if what is None:
            return
        # Mutating a parameter in place is idiomatic for tf.data dict features; only a
        # mutable default really outlives the call.
        if (
            isinstance(receiver, cst.Name)
            and owner_of(self.ctx, receiver, fn) is Owner.PARAMETER
            and not self._known_container(receiver, fn)
        ):
            return
        self._report(target, what, "item assignment", fn)

    def visit_Assign(self, node: cst.Assign, fn: TracedFunction) -> None:
        for t in node.targets:
            self._check_item_target(t.target, fn)

    def visit_AugAssign(self, node: cst.AugAssign, fn: TracedFunction) -> None:
        self._check_item_target(node.target, fn)

    def visit_Del(self, node: cst.Del, fn: TracedFunction) -> None:
        targets = node.target.elements if isinstance(node.target, cst.Tuple) else []
        for t in [el.value for el in targets] or [node.target]:
            self._check_item_target(t, fn)
