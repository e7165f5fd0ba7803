from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.messages import shorten
from tflint_graph.checks.safe_conversion import conversion_is_safe
from tflint_graph.model.calls import argument
from tflint_graph.model.certain import certain_tensors
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.names import dotted
from tflint_graph.model.tensors import Kind, holds_variable, tensors
from tflint_graph.traced import traced_of

# NumPy functions that work on a symbolic tensor (they only read its static shape) or that
# fail with some other error (dtype helpers): not this rule's concern.
_HARMLESS = frozenset(
    {
        "numpy.shape",
        "numpy.ndim",
        "numpy.isscalar",
        "numpy.dtype",
        "numpy.issubdtype",
        "numpy.result_type",
        "numpy.can_cast",
        "numpy.promote_types",
        "numpy.iinfo",
        "numpy.finfo",
        "numpy.isdtype",
    }
)
# Functions that iterate their first argument as a sequence: given one bare tensor they fail
# with OperatorNotAllowedInGraphError/TypeError (Python iteration, TFG203's concern).
_SEQUENCE_FUNCTIONS = frozenset(
    {
        "numpy.stack",
        "numpy.vstack",
        "numpy.hstack",
        "numpy.dstack",
        "numpy.column_stack",
        "numpy.concatenate",
        "numpy.block",
    }
)
# Keras 3's conversion to a NumPy array (`keras.ops`, `from keras import ops`, `tf.keras.ops`
# under TF >= 2.16): with the TensorFlow backend it raises the same NotImplementedError on a
# symbolic tensor (verified with Keras 3.15).
_KERAS_TO_NUMPY = ("keras.ops.convert_to_numpy", "keras.ops.core.convert_to_numpy")
# numpy.random.* is TFG103's (python-random) finding.
_OTHER_RULES = ("numpy.random.",)
# The TensorFlow op to use instead, by NumPy function name.
_INSTEAD = {
    "array": "the tensor itself (or tf.convert_to_tensor)",
    "asarray": "the tensor itself (or tf.convert_to_tensor)",
    "asanyarray": "the tensor itself (or tf.convert_to_tensor)",
    "copy": "tf.identity",
    "mean": "tf.reduce_mean",
    "average": "tf.reduce_mean",
    "sum": "tf.reduce_sum",
    "max": "tf.reduce_max",
    "amax": "tf.reduce_max",
    "min": "tf.reduce_min",
    "amin": "tf.reduce_min",
    "prod": "tf.reduce_prod",
    "std": "tf.math.reduce_std",
    "var": "tf.math.reduce_variance",
    "any": "tf.reduce_any",
    "all": "tf.reduce_all",
    "argmax": "tf.argmax",
    "argmin": "tf.argmin",
    "concatenate": "tf.concat",
    "stack": "tf.stack",
    "vstack": "tf.concat",
    "hstack": "tf.concat",
    "expand_dims": "tf.expand_dims",
    "squeeze": "tf.squeeze",
    "reshape": "tf.reshape",
    "transpose": "tf.transpose",
    "clip": "tf.clip_by_value",
    "where": "tf.where",
    "abs": "tf.abs",
    "exp": "tf.exp",
    "log": "tf.math.log",
    "sqrt": "tf.sqrt",
    "square": "tf.square",
    "round": "tf.round",
    "floor": "tf.floor",
    "ceil": "tf.math.ceil",
    "maximum": "tf.maximum",
    "minimum": "tf.minimum",
    "matmul": "tf.matmul",
    "dot": "tf.tensordot",
    "einsum": "tf.einsum",
    "zeros_like": "tf.zeros_like",
    "ones_like": "tf.ones_like",
    "cumsum": "tf.math.cumsum",
    "sort": "tf.sort",
    "argsort": "tf.argsort",
    "unique": "tf.unique",
    "tile": "tf.tile",
    "size": "tf.size",
    "count_nonzero": "tf.math.count_nonzero",
    "isnan": "tf.math.is_nan",
    "isinf": "tf.math.is_inf",
    "isfinite": "tf.math.is_finite",
    "norm": "tf.norm",
    "float32": "tf.cast(..., tf.float32)",
    "float64": "tf.cast(..., tf.float64)",
    "int32": "tf.cast(..., tf.int32)",
    "int64": "tf.cast(..., tf.int64)",
    "allclose": "tf.debugging.assert_near",
    "array_equal": "tf.reduce_all(tf.equal(...))",
    "tanh": "tf.tanh",
    "sin": "tf.sin",
    "cos": "tf.cos",
    "power": "tf.pow",
    "pad": "tf.pad",
    "eye": "tf.eye",
    "diag": "tf.linalg.diag",
    "trace": "tf.linalg.trace",
    "cast": "tf.cast",
    "astype": "tf.cast",
    "linspace": "tf.linspace",
    "gather": "tf.gather",
    "take": "tf.gather",
    "split": "tf.split",
    "flip": "tf.reverse",
    "roll": "tf.roll",
    "one_hot": "tf.one_hot",
    "searchsorted": "tf.searchsorted",
    "bincount": "tf.math.bincount",
    "histogram": "tf.histogram_fixed_width",
    "percentile": "tfp.stats.percentile or tf.sort",
    "median": "tf.sort (or tfp.stats.percentile)",
}


class NumpyOnTensor(Rule):
    """NumPy functions called on a symbolic tensor fail while tracing."""

    code = "TFG204"
    name = "numpy-on-tensor"
    RAISES_WHILE_TRACING = True

    VALID = [
        """
import numpy as np
import tensorflow as tf

@tf.function
def scale(x):
    factor = np.float32(0.5) * np.pi  # Python/NumPy constants: fine
    steps = np.arange(3)
    return tf.reduce_mean(x) * factor + tf.cast(tf.size(steps), tf.float32)
""",
        """
import numpy as np
import tensorflow as tf

def np_stats(x):
    return np.float32(np.mean(x))  # runs eagerly inside tf.numpy_function

@tf.function
def stats(x):
    n = np.prod(x.shape[1:])  # static shape: a Python value
    m = tf.numpy_function(np_stats, [x], tf.float32)
    return tf.cast(x, np.float32) * m / n
""",
    ]
    INVALID = [
        """
import numpy as np
import tensorflow as tf

@tf.function
def normalize(x):
    mean = np.mean(x)  # TFG204
    return x - mean
""",
        """
from numpy import asarray
import tensorflow as tf

def to_ids(text):
    tokens = tf.strings.split(text)
    return asarray(tokens)  # TFG204

ds = tf.data.Dataset.from_tensor_slices(["a b"]).map(to_ids)
""",
    ]

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        ctx = self.ctx
        res = ctx.resolve(node.func)
        if res.is_(*_KERAS_TO_NUMPY):
            self._keras_to_numpy(node, fn)
            return
        names = sorted(n for n in res.imported if n == "numpy" or n.startswith("numpy."))
        if not names or res.is_(*_HARMLESS) or res.startswith(*_OTHER_RULES):
            return
        args = list(node.args)
        if (
            res.is_(*_SEQUENCE_FUNCTIONS)
            and args
            and not isinstance(args[0].value, cst.List | cst.Tuple)
        ):
            args = args[1:]
        offending = next((a.value for a in args if self._tensor_like(a.value, fn)), None)
        if offending is None:
            return
        if conversion_is_safe(ctx, node, fn, ("NotImplementedError",)):
            return
        full = names[0]
        shown = dotted(node.func) or full
        short_name = full.rsplit(".", 1)[-1]
        instead = _INSTEAD.get(short_name)
        advice = (
            f"use {instead} instead"
            if instead
            else "use the matching tf.* op (tf.experimental.numpy mirrors the NumPy API)"
        )
        if holds_variable(ctx, fn, offending):
            what = "tf.Variable"
        elif Kind.SEQUENCE in (
            tensors(ctx, fn).kind(offending),
            certain_tensors(ctx, fn, traced_of(ctx).definitions).kind(offending),
        ):
            what = "list of symbolic tensors"
        else:
            what = "symbolic tensor"
        self.report(
            node,
            f"{shown}() on {what} {shorten(ctx.code(offending))} raises NotImplementedError "
            f"while tracing {fn.where}: NumPy cannot convert a symbolic tensor to an array; "
            f"{advice}, or wrap the NumPy code in tf.numpy_function",
            fn,
        )

    def _keras_to_numpy(self, node: cst.Call, fn: TracedFunction) -> None:
        """``keras.ops.convert_to_numpy(t)``: Keras asks TensorFlow for the array, which a
        symbolic tensor does not have."""
        arg = argument(node, 0, "x", strict=True)
        if arg is None or not self._tensor_like(arg, fn):
            return
        if conversion_is_safe(self.ctx, node, fn, ("NotImplementedError",)):
            return
        shown = dotted(node.func) or "keras.ops.convert_to_numpy"
        what = "tf.Variable" if holds_variable(self.ctx, fn, arg) else "symbolic tensor"
        self.report(
            node,
            f"{shown}() on {what} {shorten(self.ctx.code(arg))} raises NotImplementedError "
            f"while tracing {fn.where}: a symbolic tensor has no NumPy value; keep the tensor "
            "(keras.ops and tf.* ops take it as it is), or convert outside the traced code",
            fn,
        )

    def _tensor_like(self, expr: cst.BaseExpression, fn: TracedFunction) -> bool:
        if isinstance(expr, cst.List | cst.Tuple):
            return any(self._tensor_like(el.value, fn) for el in expr.elements)
        if isinstance(expr, cst.StarredElement):
            return False
        if tensors(self.ctx, fn).kind(expr) is not None or holds_variable(self.ctx, fn, expr):
            return True
        # A list of `a if <tensor test> else b`, where the test reads a parameter that the
        # code shows to be a tensor (a call passes one).
        definitions = traced_of(self.ctx).definitions
        return certain_tensors(self.ctx, fn, definitions).kind(expr) is Kind.SEQUENCE
