from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.fixing import FixSafety, Site
from tflint_graph.checks.format_pieces import (
    Piece,
    is_format,
    joined,
    pieces,
    quote_of,
    spaced,
    string_node,
    values,
)
from tflint_graph.checks.graph_error_caught_in_python import numpy_of_tensor
from tflint_graph.checks.trace_diagnostics import (
    MessageReader,
    Part,
    in_python_error_handler,
    is_trace_time_diagnostic,
    static_metadata,
)
from tflint_graph.core.finding import Severity
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.tensors import holds_variable, tensors

# builtin print() keyword -> tf.print() keyword (tf.print accepts output_stream, sep, end,
# summarize and name; flush= has no counterpart).
_PRINT_KEYWORDS = {"sep": "sep", "end": "end", "file": "output_stream"}
# The only file objects tf.print's output_stream accepts (besides logging levels and
# "file://" URLs, which print's file= never is).
_STREAMS = frozenset({"sys.stdout", "sys.stderr"})


class PrintInTraced(Rule):
    """`print()` in traced code runs once per trace, not on every call."""

    code = "TFG101"
    name = "print-in-traced"
    QUIET_IN_TESTS = True
    severity = Severity.WARNING
    FIX_SAFETY = "safe"

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
        """
import tensorflow as tf

class Dense(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units

    def call(self, inputs):
        print("tracing", inputs.shape)  # a trace-time diagnostic: meant once per trace
        print(f"building {self.units} units for {inputs.shape[-1]} features")
        return inputs
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
    print("normalized a batch")  # TFG101
    print(f"max {tf.reduce_max(x)}, shape {x.shape}")  # TFG101
    return x / 255.0

ds = tf.data.Dataset.from_tensor_slices([1.0]).map(lambda x: normalize(x))
""",
        """
import tensorflow as tf

@tf.function
def train(x, steps):
    for step in range(steps):
        print("step", step, "of", x.shape)  # TFG101
        print("tracing shape", tf.shape(x))  # TFG101
    return x
""",
    ]

    def _per_call(self, node: cst.Call, fn: TracedFunction) -> bool:
        """The print shows a tensor or a value that may differ from call to call."""
        parts = MessageReader(self.ctx, fn).read_all(a.value for a in node.args if not a.keyword)
        return bool(parts.parts & {Part.TENSOR, Part.OTHER})

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        if not self.ctx.resolve(node.func).is_builtin("print"):
            return
        if fn.autograph and fn.autograph_features & {"ALL", "BUILTIN_FUNCTIONS"}:
            return  # AutoGraph's BUILTIN_FUNCTIONS feature turns print() into tf.print()
        if is_trace_time_diagnostic(self.ctx, node, fn):
            return  # print("tracing", x.shape): meant to run once per trace
        if numpy_of_tensor(self.ctx, node, fn):
            return  # `print(t.numpy())` raises before it prints (TFG202's finding)
        if in_python_error_handler(self.ctx, node, fn) and not self._per_call(node, fn):
            return  # `except TypeError as e: print("no training flag", e)`: only while tracing
        static = [v for v in _shown(node) if _trace_time_value(v)]
        if static:
            fix = (
                "replace print(...) with tf.print(...), minding that "
                f"{self.quote(static[0], 30)} is fixed while tracing "
                "(tf.shape(x) is the shape of each call)"
            )
        else:
            fix = "replace print(...) with tf.print(...) (file= becomes output_stream=)"
        self.report(
            node,
            f"print() runs only while tracing {fn.where}; use tf.print() to print on every call",
            fn,
            fix=fix,
        )

    def fix_safety(self, node: cst.CSTNode, fn: TracedFunction | None) -> FixSafety:
        """Safe where every value shown prints as print() would print it (checked against
        TensorFlow 2.21): a literal, or a tensor (the trace-time ``Tensor("x:0", ...)`` print
        showed becomes its value on every call, which is the point of the fix).  Unsafe for
        anything else: ``tf.print`` shows a Python object's ``repr()`` (``array([1, 2, 3])``
        for a NumPy array, ``TensorShape([2])`` for ``x.shape``) and its trace-time value on
        every call."""
        if not isinstance(node, cst.Call) or fn is None:
            return "unsafe"
        inference = tensors(self.ctx, fn)
        ctx = self.ctx

        def tensor(expr: cst.BaseExpression) -> bool:
            return inference.may_be_tensor(expr) or holds_variable(ctx, fn, expr)

        return "safe" if all(_plain(v, tensor) for v in _shown(node)) else "unsafe"

    @classmethod
    def fix(
        cls,
        node: cst.CSTNode,
        updated: cst.CSTNode,
        site: Site,
        suggestion: str | None = None,
    ) -> cst.CSTNode | None:
        """``print(a, b)`` -> ``tf.print(a, b)`` with the module's own ``import tensorflow as
        X`` binding; ``file=sys.stdout``/``sys.stderr`` becomes ``output_stream=``, ``sep=``
        and ``end=`` are kept; a formatted argument becomes its text and values, as separate
        arguments (``f"loss {loss}"`` -> ``"loss", loss``; ``sep=""`` where the text is not
        space-separated).  None when no such binding is visible at the call, or an argument
        has no ``tf.print`` equivalent (``flush=``, ``file=`` an open file, ``**kwargs``, a
        format spec, ``%d``)."""
        if not isinstance(node, cst.Call) or not isinstance(updated, cst.Call):
            return None
        if not isinstance(updated.func, cst.Name) or updated.func.value != "print":
            return None
        alias = site.tensorflow_alias(node)
        if alias is None:
            return None
        args: list[cst.Arg] = []
        for original_arg, arg in zip(node.args, updated.args, strict=True):
            if arg.star == "**":
                return None  # unknown keywords
            if arg.keyword is None:
                args.append(arg)
                continue
            keyword = arg.keyword.value
            if keyword not in _PRINT_KEYWORDS:
                return None  # flush=, or something print() would reject anyway
            value = original_arg.value
            if isinstance(value, cst.Name) and value.value == "None":
                return None  # print's "use the default"; tf.print has no such value
            if keyword == "file" and not _is_std_stream(value, site):
                return None  # tf.print cannot write to an arbitrary file object
            args.append(arg.with_changes(keyword=cst.Name(_PRINT_KEYWORDS[keyword])))
        if any(arg.keyword is None and is_format(arg.value) for arg in args):
            split = _split_formats(args)
            if split is None:
                return None
            args = split
        return updated.with_changes(
            func=cst.Attribute(value=cst.Name(alias), attr=cst.Name("print")), args=args
        )


def _is_std_stream(value: cst.BaseExpression, site: Site) -> bool:
    return site.is_(value, *_STREAMS)


def _plain(expr: cst.BaseExpression, tensor: Callable[[cst.BaseExpression], bool]) -> bool:
    """``expr`` prints under tf.print as under print(): a literal, a container of them, a
    tensor's ``name``, or (``tensor``) a tensor or variable."""
    if _trace_time_value(expr):
        return False
    if _literal(expr) or (isinstance(expr, cst.Attribute) and expr.attr.value == "name"):
        return True  # a str, number, bool or None; a tensor's name is a str
    if isinstance(expr, cst.Tuple | cst.List):
        return all(_plain(e.value, tensor) for e in expr.elements if isinstance(e, cst.Element))
    if isinstance(expr, cst.Dict):
        return all(
            isinstance(e, cst.DictElement) and _plain(e.key, tensor) and _plain(e.value, tensor)
            for e in expr.elements
        )
    return tensor(expr)


def _literal(expr: cst.BaseExpression) -> bool:
    """A string (not a format), number, ``True``, ``False`` or ``None`` written in the code."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus | cst.Plus):
        expr = expr.expression
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    if isinstance(expr, cst.SimpleString | cst.ConcatenatedString):
        return not is_format(expr)
    return isinstance(expr, cst.BaseNumber)


def _shown(call: cst.Call) -> list[cst.BaseExpression]:
    """The values a print shows: its positional arguments, a format's values in its place."""
    shown: list[cst.BaseExpression] = []
    for arg in call.args:
        if arg.keyword is not None:
            continue
        found = pieces(arg.value) if is_format(arg.value) else None
        shown.extend(values(found) if found is not None else [arg.value])
    return shown


def _trace_time_value(expr: cst.BaseExpression) -> bool:
    """Static metadata that tf.print would show on every call as it was while tracing: a
    shape (``x.shape``, ``x.shape[0]``, ``len(x.shape)``) or a dtype.  A name (``x.name``,
    ``x.dtype.name``) is a string tf.print prints as print() does."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "name":
        return False
    return static_metadata(expr)


def _split_formats(args: Sequence[cst.Arg]) -> list[cst.Arg] | None:
    """``args`` (tf.print's) with each formatted positional argument replaced by its text
    and values; None where that cannot print the same text."""
    sep_arg = next((a for a in args if a.keyword is not None and a.keyword.value == "sep"), None)
    sep = " " if sep_arg is None else _text(sep_arg.value)
    positional = [a for a in args if a.keyword is None]
    keywords = [a for a in args if a.keyword is not None]
    if sep is None or any(a.star for a in positional):
        return None  # a computed sep=, or *values whose count decides the separators
    found: list[list[Piece] | None] = []
    for arg in positional:
        if is_format(arg.value):
            split = pieces(arg.value)
            if split is None:
                return None
            found.append(split)
        else:
            found.append(None)
    quote = next(quote_of(a.value) for a, f in zip(positional, found, strict=True) if f)
    if sep == " ":
        spaced_args: list[cst.Arg] = []
        for arg, split in zip(positional, found, strict=True):
            items = [arg.value] if split is None else spaced(split)
            if items is None:
                break
            spaced_args += _args(arg, items, quote)
        else:
            return spaced_args + keywords
    everything: list[Piece] = []
    for i, (arg, split) in enumerate(zip(positional, found, strict=True)):
        if i:
            everything.append(sep)
        everything.extend([arg.value] if split is None else split)
    joined_args = _args(positional[-1], joined(everything), quote)
    empty = string_node("", quote)
    if sep_arg is None:
        return [*joined_args, *keywords, cst.Arg(value=empty, keyword=cst.Name("sep"), equal=_EQ)]
    return [*joined_args, *(a.with_changes(value=empty) if a is sep_arg else a for a in keywords)]


_EQ = cst.AssignEqual(
    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
)


def _args(last: cst.Arg, items: Sequence[Piece], quote: str) -> list[cst.Arg]:
    """Arguments for ``items``, the last keeping ``last``'s comma and spacing."""
    nodes = [string_node(i, quote) if isinstance(i, str) else i for i in items]
    return [cst.Arg(value=n) for n in nodes[:-1]] + [last.with_changes(value=nodes[-1])]


def _text(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.SimpleString | cst.ConcatenatedString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None
