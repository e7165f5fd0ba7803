from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.names import dotted
from tflint_graph.model.values import values_of

_MODULES = ("random.", "numpy.random.", "secrets.")
_EXACT = ("uuid.uuid1", "uuid.uuid4")
_GENERATORS = (
    "numpy.random.default_rng",
    "numpy.random.RandomState",
    "numpy.random.Generator",
    "random.Random",
    "random.SystemRandom",
)
# What to reach for instead, by the Python function's name.
_INSTEAD = {
    "random": "tf.random.uniform([])",
    "uniform": "tf.random.uniform()",
    "rand": "tf.random.uniform()",
    "randint": "tf.random.uniform(..., dtype=tf.int32)",
    "integers": "tf.random.uniform(..., dtype=tf.int32)",
    "gauss": "tf.random.normal()",
    "normal": "tf.random.normal()",
    "randn": "tf.random.normal()",
    "standard_normal": "tf.random.normal()",
    "shuffle": "tf.random.shuffle()",
    "permutation": "tf.random.shuffle()",
    "choice": "tf.random.categorical() or tf.random.shuffle()",
}


class PythonRandom(Rule):
    """Python or NumPy randomness in traced code is drawn once and frozen into the graph."""

    code = "TFG103"
    name = "python-random"

    VALID = [
        """
import tensorflow as tf

@tf.function
def augment(image):
    if tf.random.uniform([]) > 0.5:
        image = tf.image.flip_left_right(image)
    return image
""",
        """
import random
import tensorflow as tf

def pick_files(files):
    random.shuffle(files)  # eager: fine
    return files

@tf.function
def step(x, random=None):
    return x
""",
        """
from mylib import random
import tensorflow as tf

@tf.function
def step(x):
    return random.jitter(x)  # a project module that happens to be called random
""",
    ]
    INVALID = [
        """
import random
import tensorflow as tf

def augment(image):
    if random.random() > 0.5:  # TFG103
        image = tf.image.flip_left_right(image)
    return image

ds = tf.data.Dataset.list_files("*.png").map(augment)
""",
        """
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)

@tf.function
def noisy(x):
    noise = np.random.normal(size=3)  # TFG103
    return x + noise * rng.uniform()  # TFG103
""",
    ]

    def _random_call(self, call: cst.Call, fn: TracedFunction) -> str | None:
        res = self.ctx.resolve(call.func)
        if res.startswith(*_MODULES) or res.is_(*_EXACT):
            return next(iter(sorted(res.imported)))
        func = call.func
        if isinstance(func, cst.Attribute):
            for value in values_of(self.ctx, func.value, fn):
                if isinstance(value, cst.Call) and self.ctx.resolve(value.func).is_(*_GENERATORS):
                    return dotted(func) or func.attr.value
        return None

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        name = self._random_call(node, fn)
        if name is None:
            return
        short = name.rsplit(".", 1)[-1]
        instead = _INSTEAD.get(short, "tf.random.* ops or a tf.random.Generator")
        shown = dotted(node.func) or name
        self.report(
            node,
            f"{shown}() is drawn once while tracing {fn.where} and frozen into the graph, "
            f"so every call reuses the same value; use {instead}",
            fn,
        )
