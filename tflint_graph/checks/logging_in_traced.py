from __future__ import annotations

import re

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.trace_diagnostics import (
    MessageReader,
    Part,
    decided_statically,
    decided_when_tracing,
    is_trace_time_diagnostic,
    message_arguments,
)
from tflint_graph.core.facts import TraceKind
from tflint_graph.core.finding import Severity
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.names import Resolution, dotted
from tflint_graph.model.values import values_of

_LEVELS = frozenset(
    {
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "fatal",
        "log",
        "vlog",
        "log_every_n",
        "log_every_n_seconds",
        "log_first_n",
        "log_if",
    }
)
_LOGGING_MODULES = ("logging.", "absl.logging.", "tensorflow.logging.", "loguru.logger.")
_LOGGER_FACTORIES = (
    "logging.getLogger",
    "absl.logging.get_absl_logger",
    "tensorflow.get_logger",
    "structlog.get_logger",
)
# `Logger.log(level, msg)` and absl's `vlog(level, msg)` take a level first; a project's own
# `logger.log(session, "loss", loss)` (a recorder, a metrics sink) is no Python logging.
_LEVEL_FIRST = frozenset({"log", "vlog"})
_LOGGER_NAME = re.compile(r"^_*(log|logger|LOG|LOGGER|Logger)$")


class LoggingInTraced(Rule):
    """Logging calls in traced code run only while tracing."""

    code = "TFG107"
    name = "logging-in-traced"
    QUIET_IN_TESTS = True
    severity = Severity.WARNING

    VALID = [
        """
import logging
import tensorflow as tf

logger = logging.getLogger(__name__)

@tf.function
def step(x):
    tf.print("loss:", x)
    return x

def fit(x):
    logger.info("starting")  # eager: fine
    return step(x)
""",
        """
import tensorflow as tf

@tf.function
def step(x, log=None):
    tf.debugging.assert_all_finite(x, "bad x")
    return tf.math.log(x)
""",
        """
import logging
import warnings
import tensorflow as tf

class Block(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units

    def call(self, a, b):
        # Trace-time diagnostics: static metadata only, meant once per trace.
        logging.info("built with %d units for %s", self.units, a.shape)
        tf.get_logger().debug("retracing for dtype %s", a.dtype)
        if a.shape[-1] != b.shape[-1]:
            warnings.warn("last dimensions differ; broadcasting")
        return a + b
""",
    ]
    INVALID = [
        """
import logging
import tensorflow as tf

logger = logging.getLogger(__name__)

@tf.function
def step(x):
    logging.info("step")  # TFG107
    logger.debug("x=%s", x)  # TFG107
    logger.info(f"shape {tf.shape(x)}")  # TFG107
    return x
""",
        """
import warnings
from absl import logging
import tensorflow as tf

class Net(tf.keras.layers.Layer):
    def call(self, x):
        logging.info("call")  # TFG107
        warnings.warn("slow path")  # shown once per place anyway: not flagged
        warnings.warn(f"slow path for {tf.reduce_max(x)}")  # TFG107
        return x
""",
    ]

    def _is_logger(self, receiver: cst.BaseExpression, fn: TracedFunction) -> bool:
        if isinstance(receiver, cst.Call):
            return self.ctx.resolve(receiver.func).is_(*_LOGGER_FACTORIES)
        for value in values_of(self.ctx, receiver, fn):
            if isinstance(value, cst.Call) and self.ctx.resolve(value.func).is_(*_LOGGER_FACTORIES):
                return True
        last = (
            receiver.attr.value
            if isinstance(receiver, cst.Attribute)
            else (receiver.value if isinstance(receiver, cst.Name) else "")
        )
        return bool(_LOGGER_NAME.match(last)) and not self.ctx.resolve(receiver).imported

    def _same_every_call(self, node: cst.Call, fn: TracedFunction) -> bool:
        """The warning's text and category, and the tests of the ``if``/``while`` around it,
        hold nothing that changes between calls."""
        if _in_graph_branch(fn):
            return False
        reader = MessageReader(self.ctx, fn).read_all(message_arguments(node))
        child: cst.CSTNode = node
        for anc in self.ctx.ancestors(node):
            if anc is fn.node:
                break
            if isinstance(anc, cst.If | cst.While | cst.IfExp) and child is not anc.test:
                reader.read(anc.test)
            child = anc
        return not reader.parts & {Part.TENSOR, Part.OTHER}

    def _built_path(self, node: cst.Call, fn: TracedFunction) -> bool:
        """A message about how this trace is built, the same on every call: it shows Python
        settings (``logging.info("policy %s", augment_name)``), or it is a literal under a
        branch decided when tracing (``if method is not None:``, ``except ImportError:``)."""
        if _in_graph_branch(fn):
            return False  # a tf.cond/while_loop branch is traced whatever the values
        parts = MessageReader(self.ctx, fn).read_all(message_arguments(node)).parts
        if parts & {Part.TENSOR, Part.OTHER}:
            return False
        if parts & {Part.CONFIG, Part.STATIC}:
            return True
        return decided_when_tracing(self.ctx, node, fn)

    def _shows_tensor(self, node: cst.Call, fn: TracedFunction) -> bool:
        reader = MessageReader(self.ctx, fn).read_all(message_arguments(node))
        return Part.TENSOR in reader.parts

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        func = node.func
        res = self.ctx.resolve(func)
        hit = res.is_("warnings.warn") or (
            isinstance(func, cst.Attribute | cst.Name)
            and res.startswith(*_LOGGING_MODULES)
            and _last(func) in _LEVELS
        )
        if not hit and isinstance(func, cst.Attribute) and func.attr.value in _LEVELS:
            hit = self._is_logger(func.value, fn) and (
                func.attr.value not in _LEVEL_FIRST or _level_first(node)
            )
        if not hit or is_trace_time_diagnostic(self.ctx, node, fn):
            return
        if _last(func) == "debug" and not self._shows_tensor(node, fn):
            # Off unless a developer asks: a debug line documents how the graph is built
            # (a plan entry, a separator), and once per trace is what it is for.
            return
        if _last(func) == "log_first_n" and _once(node) and not self._shows_tensor(node, fn):
            return  # `log_first_n(WARNING, msg, 1, keys)`: asked for one message, at most
        if _is_warning(func, res) and decided_statically(self.ctx, node, fn):
            return  # `if x.shape.rank != 4: warnings.warn(...)`: a check of the trace itself
        if res.is_("warnings.warn") and self._same_every_call(node, fn):
            # Python shows a warning once per place and text anyway: tracing changes nothing.
            return
        if self._built_path(node, fn):
            return
        shown = dotted(func) or f"{self.ctx.code(func)}"
        self.report(
            node,
            f"{shown}() runs only while tracing {fn.where}, not on every call; "
            "use tf.print() for per-call output, or log outside the traced function",
            fn,
        )


def _is_warning(func: cst.BaseExpression, res: Resolution) -> bool:
    """``warnings.warn``, ``logging.warning``, ``logger.warning``/``warn``."""
    return res.is_("warnings.warn") or (
        isinstance(func, cst.Attribute) and func.attr.value in ("warning", "warn")
    )


def _once(call: cst.Call) -> bool:
    """``log_first_n(level, msg, 1, ...)``: the count is the literal 1."""
    count = call.args[2].value if len(call.args) > 2 and call.args[2].keyword is None else None
    if count is None:
        count = next((a.value for a in call.args if a.keyword and a.keyword.value == "n"), None)
    return isinstance(count, cst.Integer) and count.value == "1"


def _last(func: cst.Attribute | cst.Name) -> str:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value


def _in_graph_branch(fn: TracedFunction) -> bool:
    """``fn`` is (called from) a callable of graph control flow: ``tf.cond`` traces both
    branches and ``tf.while_loop`` its body once, whatever the values.  ``strategy.run``
    is no branch: it traces its step function as a plain call does."""
    current: TracedFunction | None = fn
    while current is not None:
        if current.kind is TraceKind.CONTROL_FLOW and not current.reason.startswith("strategy.run"):
            return True
        current = current.parent
    return False


def _level_first(node: cst.Call) -> bool:
    """The first argument reads as a logging level: a number, a constant such as
    ``logging.INFO``, or a name that says it is one (``level``, ``lvl``)."""
    if any(a.keyword is not None and a.keyword.value == "level" for a in node.args):
        return True
    if not node.args or node.args[0].keyword is not None or node.args[0].star:
        return bool(node.args) and node.args[0].star == "*"
    first = node.args[0].value
    if isinstance(first, cst.UnaryOperation):
        first = first.expression
    if isinstance(first, cst.Integer):
        return True
    if isinstance(first, cst.Call):
        first = first.func
    name = first.attr.value if isinstance(first, cst.Attribute) else getattr(first, "value", "")
    if not isinstance(name, str) or not name:
        return False
    return name.isupper() or "level" in name.lower() or "lvl" in name.lower()
