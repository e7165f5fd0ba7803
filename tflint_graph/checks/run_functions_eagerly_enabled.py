from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.fixing import Site
from tflint_graph.core.finding import Severity
from tflint_graph.core.paths import is_test_path
from tflint_graph.core.vocabulary import EAGER_SWITCHES
from tflint_graph.model.calls import argument, is_true
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.values import is_main_guard

_SWITCHES = EAGER_SWITCHES


def _is_switch(test: cst.BaseExpression) -> bool:
    """A condition decided when the program runs (a flag, an argument, the environment); not
    a literal and not the script's ``__main__`` guard."""
    if isinstance(test, cst.Name) and test.value in ("True", "False", "None"):
        return False
    return not isinstance(test, cst.BaseNumber | cst.BaseString) and not is_main_guard(test)


def _enabled(call: cst.Call) -> bool:
    """The switch's argument is the literal ``True`` (positionally or as ``run_eagerly=``)."""
    return is_true(argument(call, 0, "run_eagerly", strict=True))


class RunFunctionsEagerlyEnabled(Rule):
    """`tf.config.run_functions_eagerly(True)` outside tests turns every graph off."""

    code = "TFG402"
    name = "run-functions-eagerly-enabled"
    severity = Severity.WARNING
    traced_only = False
    TRIGGERS = frozenset({"run_functions_eagerly", "experimental_run_functions_eagerly"})
    # Deleting the switch turns the graphs back on: code that only worked eagerly (a
    # `.numpy()` or a Python `if` on a tensor inside a tf.function) starts failing.
    FIX_SAFETY = "unsafe"

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
import warnings

import tensorflow as tf

class TorchWrapper:
    def __init__(self, torch_model):
        self.model = torch_model
        # A PyTorch model cannot run inside a graph: switch, and say so.
        tf.config.run_functions_eagerly(True)
        warnings.warn("tf.functions now run eagerly to call the PyTorch model")
""",
        """
import tensorflow as tf

class config:
    @staticmethod
    def run_functions_eagerly(flag):
        return flag

config.run_functions_eagerly(True)  # a local class, not TensorFlow's
""",
        """
import os
import tensorflow as tf

def main(args, FLAGS):
    if args.debug:
        tf.config.run_functions_eagerly(True)  # behind a debug switch
    if not FLAGS.run_eagerly:
        pass
    else:
        tf.config.experimental_run_functions_eagerly(True)
    if os.environ.get("TF_DEBUG_EAGER") == "1":
        tf.config.run_functions_eagerly(True)
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
        """
import tensorflow as tf

if __name__ == "__main__":
    tf.config.run_functions_eagerly(True)  # TFG402
if True:
    tf.config.run_functions_eagerly(True)  # TFG402
""",
    ]

    def visit_Call(self, node: cst.Call, fn: TracedFunction | None) -> None:
        resolution = self.ctx.resolve(node.func)
        if not resolution.is_(*_SWITCHES) or not _enabled(node):
            return
        if is_test_path(self.ctx.path) or self._behind_switch(node) or self._announced(node):
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

    @classmethod
    def fix(
        cls,
        node: cst.CSTNode,
        updated: cst.CSTNode,
        site: Site,
        suggestion: str | None = None,
    ) -> cst.RemovalSentinel | None:
        """Delete the statement the call is (``pass`` where that empties a block); a call
        inside a larger expression or statement is left for you."""
        if isinstance(node, cst.Call) and isinstance(site.parent(node), cst.Expr):
            return cst.RemovalSentinel.REMOVE
        return None

    def _announced(self, node: cst.Call) -> bool:
        """The block that makes the switch also warns about it (``warnings.warn(...)``,
        ``logger.warning(...)``): a wrapper that must run eagerly (a PyTorch model inside) and
        says so is no silent switch."""
        stmt = self.ctx.parent(self.ctx.parent(node))
        block = self.ctx.parent(stmt) if isinstance(stmt, cst.SimpleStatementLine) else None
        if not isinstance(block, cst.IndentedBlock | cst.Module):
            return False
        for line in block.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                call = small.value if isinstance(small, cst.Expr) else None
                if isinstance(call, cst.Call) and self._warns(call.func):
                    return True
        return False

    def _warns(self, func: cst.BaseExpression) -> bool:
        resolution = self.ctx.resolve(func)
        if resolution.is_("warnings.warn", "logging.warning", "absl.logging.warning"):
            return True
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("warning", "warn")
            and isinstance(func.value, cst.Name)
            and "log" in func.value.value.lower()
        )

    def _behind_switch(self, node: cst.CSTNode) -> bool:
        """An ``if`` (or conditional expression) around ``node`` in its own function or at
        module level decides on a switch (``if args.debug:``, ``if FLAGS.run_eagerly:``, an
        environment check): the author kept eager mode for debugging runs (SPEC: TFG402)."""
        child = node
        for parent in self.ctx.ancestors(node):
            if isinstance(parent, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                return False
            if (
                isinstance(parent, cst.If | cst.IfExp)
                and child is not parent.test
                and _is_switch(parent.test)
            ):
                return True
            child = parent
        return False
