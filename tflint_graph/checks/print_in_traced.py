from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.core.finding import Severity
from tflint_graph.model.context import TracedFunction


class PrintInTraced(Rule):
    """`print()` in traced code runs once per trace, not on every call."""

    code = "TFG101"
    name = "print-in-traced"
    severity = Severity.WARNING

    VALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    tf.print("loss", x)
    return x * 2

def report(x):
    print(x)  # eager code: fine
""",
        """
import tensorflow as tf

@tf.function
def step(x, print=tf.print):
    print(x)  # the parameter, not the builtin
    return x
""",
        """
from rich import print
import tensorflow as tf

@tf.function
def step(x):
    print(x)
    return x
""",
        """
import tensorflow as tf

def log_value(v):
    print(v)

@tf.function
def step(x):
    return tf.py_function(lambda v: print(v), [x], [])
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    print("step", x)  # TFG101
    return x * 2
""",
        """
import tensorflow as tf

def normalize(x):
    print(x.shape)  # TFG101
    return x / 255.0

ds = tf.data.Dataset.from_tensor_slices([1.0]).map(lambda x: normalize(x))
""",
    ]

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        if self.ctx.resolve(node.func).is_builtin("print"):
            self.report(
                node,
                f"print() runs only while tracing {fn.where}; "
                "use tf.print() to print on every call",
                fn,
                fix="replace print(...) with tf.print(...) (file= becomes output_stream=)",
            )
