from __future__ import annotations

from fnmatch import fnmatch

import libcst as cst

from tflint_graph.checks.base import ModuleRule
from tflint_graph.core.finding import Severity
from tflint_graph.core.paths import is_test_file
from tflint_graph.model import walk
from tflint_graph.model.context import TracedFunction, TraceKind
from tflint_graph.model.tensors import tensors
from tflint_graph.traced import traced_of

# TensorFlow calls whose cost cannot be counted as one op: they trace other Python code,
# build pipelines or models, or are control flow.  A helper calling one is left alone.
_OPAQUE_PREFIXES = (
    "tensorflow.data.",
    "tensorflow.keras.",
    "tensorflow.distribute.",
    "tensorflow.saved_model.",
    "tensorflow.summary.",
    "tensorflow.function",
    "tensorflow.py_function",
    "tensorflow.numpy_function",
    "tensorflow.compat.",
    "tensorflow.experimental.",
    "tensorflow.autograph.",
    "tensorflow.config.",
    "tensorflow.Variable",
    "tensorflow.Module",
    "tensorflow.cond",
    "tensorflow.case",
    "tensorflow.switch_case",
    "tensorflow.while_loop",
    "tensorflow.map_fn",
    "tensorflow.vectorized_map",
    "tensorflow.scan",
    "tensorflow.foldl",
    "tensorflow.foldr",
    "tensorflow.nest.",
    "tensorflow.GradientTape",
    "tensorflow.init_scope",
    "tensorflow.name_scope",
    "tensorflow.device",
    "tensorflow.control_dependencies",
    "tensorflow.xla.",
    "tensorflow.tpu.",
    "tensorflow.raw_ops.",
)
# Builtins that add no op and call no user code we cannot see.
_FREE_BUILTINS = frozenset({"len", "isinstance", "tuple", "list", "dict", "str", "int", "float"})


class _Counter(walk.Visitor):
    """Counts TensorFlow ops in a body; ``opaque`` when the cost cannot be known."""

    def __init__(self, rule: TinyHelperDecorated, fn: TracedFunction) -> None:
        self.ctx = rule.ctx
        self.tensors = tensors(rule.ctx, fn)
        self.ops = 0
        self.opaque = False

    def _stop(self) -> bool:
        self.opaque = True
        return False

    # Loops, nested code and anything we cannot cost: not a tiny helper.
    def visit_For(self, node: cst.For) -> bool:
        return self._stop()

    def visit_While(self, node: cst.While) -> bool:
        return self._stop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return self._stop()

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return self._stop()

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return self._stop()

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._stop()

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return self._stop()

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._stop()

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return self._stop()

    def visit_With(self, node: cst.With) -> bool:
        return self._stop()

    def visit_Try(self, node: cst.Try) -> bool:
        return self._stop()

    def visit_If(self, node: cst.If) -> bool:
        return self._stop()  # may become a tf.cond: leave it alone

    def visit_Call(self, node: cst.Call) -> None:
        res = self.ctx.resolve(node.func)
        if res.imported:
            if res.startswith("tensorflow.", "keras.ops.") and not any(
                n.startswith(_OPAQUE_PREFIXES) for n in res.imported
            ):
                self.ops += 1
            else:
                self.opaque = True
            return
        if any(res.is_builtin(b) for b in _FREE_BUILTINS):
            return
        if isinstance(node.func, cst.Attribute) and self.tensors.is_tensor(node.func.value):
            self.ops += 1  # a tensor method: x.assign_add(1), x.numpy() ...
            return
        self.opaque = True  # a module function, a layer, a method: unknown cost

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self.tensors.is_tensor(node):
            self.ops += 1

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if self.tensors.is_tensor(node):
            self.ops += 1

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self.tensors.is_tensor(node):
            self.ops += len(node.comparisons)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.tensors.is_tensor(node.target) or self.tensors.is_tensor(node.value):
            self.ops += 1

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if self.tensors.is_tensor(node.value):
            self.ops += 1


class TinyHelperDecorated(ModuleRule):
    """`@tf.function` on a helper of one or two ops adds tracing and a graph cache, no speed."""

    code = "TFG401"
    name = "tiny-helper-decorated"
    severity = Severity.INFO

    VALID = [
        """
import tensorflow as tf

@tf.function
def step(x, y):
    a = tf.matmul(x, y)
    b = tf.nn.relu(a)
    return tf.reduce_sum(b)  # three ops

@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def scale(x):
    return x * 2.0  # a serving endpoint needs its own tf.function
""",
        """
import tensorflow as tf

def helper(x):
    return x * 2.0

@tf.function
def serve(x):
    return x + 1.0  # a serving name

@tf.function
def step(x):
    return helper(x) + 1.0  # calls module code: cost unknown

@tf.function
def scale(x):
    return x * 2.0  # tiny, but called only from eager code: an entry point

@tf.function
def loop(x):
    for i in tf.range(10):
        x = x + 1.0
    return x
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def scale(x):  # TFG401
    return x * 2.0

@tf.function
def step(x, y):
    for i in tf.range(3):
        x = scale(x) + y
    return x
""",
        """
import tensorflow as tf

@tf.function
def normalize(x):  # TFG401
    return tf.math.l2_normalize(x)

@tf.function
def step(x, y):
    a = normalize(x)
    b = tf.matmul(a, y)
    return tf.reduce_mean(b) + 1.0
""",
    ]

    def check(self) -> None:
        if is_test_file(self.ctx.path):
            return  # tests trace small functions on purpose (counting traces, shapes)
        for info in list(self.ctx.traced.values()):
            self._check(info)

    def _check(self, info: TracedFunction) -> None:
        node = info.node
        if (
            info.kind is not TraceKind.DECORATED
            or info.parent is not None
            or not isinstance(node, cst.FunctionDef)
            or node.asynchronous is not None
            or len(node.decorators) != 1
            or info.input_signature is not None
            or any(fnmatch(node.name.value, p) for p in self.ctx.config.serving_name_patterns)
        ):
            return
        owner = self.ctx.enclosing_class(node)
        if owner is not None and owner.bases:
            return  # a tf.Module / Keras method may be an exported endpoint
        counter = _Counter(self, info)
        counter.walk(node.body)
        limit = self.ctx.config.tiny_helper_max_ops
        if counter.opaque or counter.ops == 0 or counter.ops > limit:
            return
        # Only a helper: a tiny tf.function that no traced code calls is an entry point
        # (often a minimal example), and whether its callers loop is not known.
        callers = self._traced_callers(info)
        if not callers:
            return
        ops = f"{counter.ops} TensorFlow op{'s' if counter.ops != 1 else ''}"
        self.report(
            node,
            f"@tf.function on the tiny helper {info.display} ({ops}, no loop; "
            f"tiny-helper-max-ops={limit}) adds tracing cost and another graph cache and "
            f"gives no speed-up; it is called from {', '.join(callers)}, where it is inlined "
            "anyway: drop the decorator and keep one tf.function per step",
            info,
            fix="remove @tf.function from the helper and decorate the calling step instead",
        )

    def _traced_callers(self, info: TracedFunction) -> list[str]:
        traced = traced_of(self.ctx)
        callers: list[str] = list(info.callers_elsewhere)  # traced code of other modules
        for other in self.ctx.traced.values():
            if other is info:
                continue
            facts = traced.facts.bodies.get(other.node)
            if facts is None:
                continue
            for call in facts.calls:
                if any(f is info.node for f, _ in traced.callables(call.func, other.node)):
                    callers.append(other.display)
                    break
        return callers
