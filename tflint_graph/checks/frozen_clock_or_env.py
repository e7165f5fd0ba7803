from __future__ import annotations

from functools import cached_property

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.names import dotted

_CLOCKS = frozenset(
    f"time.{n}"
    for n in (
        "time",
        "time_ns",
        "perf_counter",
        "perf_counter_ns",
        "monotonic",
        "monotonic_ns",
        "process_time",
        "process_time_ns",
        "thread_time",
        "localtime",
        "gmtime",
        "ctime",
        "asctime",
        "strftime",
    )
) | {
    "datetime.datetime.now",
    "datetime.datetime.utcnow",
    "datetime.datetime.today",
    "datetime.date.today",
}
_ENV_CALLS = frozenset({"os.getenv", "os.getenvb"})
# Variables Keras and TensorFlow read once, at import, to choose what they are: no later
# change takes effect, so freezing one at trace time freezes what was fixed already.
_FIXED_AT_IMPORT = frozenset({"KERAS_BACKEND", "TF_USE_LEGACY_KERAS"})


class FrozenClockOrEnv(Rule):
    """Clock and environment reads in traced code are taken once, at trace time."""

    code = "TFG104"
    name = "frozen-clock-or-env"

    VALID = [
        """
import time
import tensorflow as tf

@tf.function
def step(x):
    return x, tf.timestamp()

def train(x):
    start = time.perf_counter()
    step(x)
    return time.perf_counter() - start
""",
        """
import os
import tensorflow as tf

BATCH = int(os.environ.get("BATCH", "32"))  # module level: read once on purpose

@tf.function
def step(x, time=None):
    return x * BATCH
""",
    ]
    INVALID = [
        """
import time
from datetime import datetime
import tensorflow as tf

@tf.function
def step(x):
    started = time.time()  # TFG104
    stamp = datetime.now()  # TFG104
    return x, started
""",
        """
import os
import tensorflow as tf

@tf.function
def step(x):
    if os.environ["DEBUG"] == "1":  # TFG104
        x = x + 1
    return x * float(os.getenv("SCALE", "1"))  # TFG104
""",
    ]

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        res = self.ctx.resolve(node.func)
        shown = dotted(node.func) or "call"
        if any(n in _CLOCKS for n in res.imported):
            self.report(
                node,
                f"{shown}() is read once while tracing {fn.where} and frozen into the graph "
                "as a constant; use tf.timestamp() to get the time of each call",
                fn,
            )
        elif res.is_(*_ENV_CALLS):
            self._env(node, shown + "()", fn)

    @cached_property
    def _may_read_environ(self) -> bool:
        # Whatever the import spelling, a name or attribute that resolves to os.environ
        # needs the word in the source: most modules never mention it, and most names
        # need no resolving.
        return "environ" in self.ctx.source

    def visit_Attribute(self, node: cst.Attribute, fn: TracedFunction) -> None:
        if self._may_read_environ and self.ctx.resolve(node).is_("os.environ"):
            self._env(node, dotted(node) or "os.environ", fn)

    def visit_Name(self, node: cst.Name, fn: TracedFunction) -> None:
        # `from os import environ`; the name inside `os.environ` is an attribute, not this.
        if not self._may_read_environ:
            return
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return
        if self.ctx.resolve(node).is_("os.environ"):
            self._env(node, node.value, fn)

    def _key(self, node: cst.CSTNode) -> str | None:
        """The variable ``node`` reads when it names it by a string literal:
        ``os.getenv("K")``, ``os.environ["K"]``, ``os.environ.get("K")``."""
        if isinstance(node, cst.Call):
            first = node.args[0].value if node.args else None
        else:
            parent = self.ctx.parent(node)
            first = None
            if isinstance(parent, cst.Subscript) and parent.value is node:
                index = parent.slice[0].slice if len(parent.slice) == 1 else None
                first = index.value if isinstance(index, cst.Index) else None
            elif isinstance(parent, cst.Attribute) and parent.attr.value == "get":
                call = self.ctx.parent(parent)
                if isinstance(call, cst.Call) and call.func is parent and call.args:
                    first = call.args[0].value
        if isinstance(first, cst.SimpleString):
            value = first.evaluated_value
            return value if isinstance(value, str) else None
        return None

    def _env(self, node: cst.CSTNode, shown: str, fn: TracedFunction) -> None:
        if self._key(node) in _FIXED_AT_IMPORT:
            return  # `os.environ["KERAS_BACKEND"]`: fixed once Keras is imported
        self.report(
            node,
            f"{shown} is read once while tracing {fn.where} and frozen into the graph; "
            "read it outside the traced function and pass the value in",
            fn,
        )
