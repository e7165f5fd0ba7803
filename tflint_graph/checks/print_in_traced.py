from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.fixing import FixSite
from tflint_graph.core.finding import Severity
from tflint_graph.model.context import TracedFunction

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

    @classmethod
    def fix(cls, node: cst.CSTNode, updated: cst.CSTNode, site: FixSite) -> cst.CSTNode | None:
        """``print(a, b)`` -> ``tf.print(a, b)`` with the module's own ``import tensorflow as
        X`` binding; ``file=sys.stdout``/``sys.stderr`` becomes ``output_stream=``, ``sep=``
        and ``end=`` are kept.  None when no such binding is visible at the call, or an
        argument has no ``tf.print`` equivalent (``flush=``, ``file=`` an open file,
        ``**kwargs``)."""
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
        return updated.with_changes(
            func=cst.Attribute(value=cst.Name(alias), attr=cst.Name("print")), args=args
        )


def _is_std_stream(value: cst.BaseExpression, site: FixSite) -> bool:
    names = site.qualified_names(value)
    return bool(names) and all(q.name in _STREAMS for q in names)
