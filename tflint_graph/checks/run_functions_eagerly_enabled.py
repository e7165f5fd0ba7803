from __future__ import annotations

from pathlib import PurePath

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.core.finding import Severity
from tflint_graph.model.context import TracedFunction

_SWITCHES = (
    "tensorflow.config.run_functions_eagerly",
    "tensorflow.config.experimental_run_functions_eagerly",
)
_TEST_DIRS = frozenset({"tests", "test"})


def is_test_path(path: str) -> bool:
    """``test_*.py``, ``*_test.py``, ``conftest.py``, or anything under ``tests/``/``test/``."""
    parts = PurePath(path.replace("\\", "/")).parts
    if not parts:
        return False
    base = parts[-1]
    if base == "conftest.py" or (base.startswith("test_") and base.endswith(".py")):
        return True
    if base.endswith("_test.py"):
        return True
    return any(part in _TEST_DIRS for part in parts[:-1])


def _enabled(call: cst.Call) -> bool:
    """The switch's argument is the literal ``True`` (positionally or as ``run_eagerly=``)."""
    for arg in call.args:
        if arg.star:
            return False
        if arg.keyword is None or arg.keyword.value == "run_eagerly":
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
    return False


class RunFunctionsEagerlyEnabled(Rule):
    """`tf.config.run_functions_eagerly(True)` outside tests turns every graph off."""

    code = "TFG402"
    name = "run-functions-eagerly-enabled"
    severity = Severity.WARNING
    traced_only = False
    TRIGGERS = frozenset({"run_functions_eagerly", "experimental_run_functions_eagerly"})

    VALID = [
        """
import tensorflow as tf

tf.config.run_functions_eagerly(False)

@tf.function
def step(x):
    return x * 2
""",
        """
import tensorflow as tf

DEBUG = False
tf.config.run_functions_eagerly(DEBUG)  # not a literal True: left to the reader
""",
        """
import tensorflow as tf

class config:
    @staticmethod
    def run_functions_eagerly(flag):
        return flag

config.run_functions_eagerly(True)  # a local class, not TensorFlow's
""",
    ]
    INVALID = [
        """
import tensorflow as tf

tf.config.run_functions_eagerly(True)  # TFG402

@tf.function
def step(x):
    return x * 2
""",
        """
from tensorflow import config as tfc

def main():
    tfc.experimental_run_functions_eagerly(run_eagerly=True)  # TFG402
""",
    ]

    def visit_Call(self, node: cst.Call, fn: TracedFunction | None) -> None:
        resolution = self.ctx.resolve(node.func)
        if not resolution.is_(*_SWITCHES) or not _enabled(node):
            return
        if is_test_path(self.ctx.path):
            return
        switch = _SWITCHES[1] if resolution.is_(_SWITCHES[1]) else _SWITCHES[0]
        switch = switch.removeprefix("tensorflow.config.")
        self.report(
            node,
            f"tf.config.{switch}(True) outside tests makes every tf.function in the process "
            "run eagerly: no graphs, no XLA and no graph optimisations, silently, in "
            "production; call it only from tests (or behind a debug flag that defaults "
            "to off)",
            fn,
            fix="delete the call, or move it into a test or conftest.py",
        )
