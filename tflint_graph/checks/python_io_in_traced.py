from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.core.finding import Severity
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.names import dotted
from tflint_graph.model.values import values_of
from tflint_graph.traced import traced_of

_IO_CALLS = frozenset(
    {
        "pickle.dump",
        "json.dump",
        "numpy.save",
        "numpy.savez",
        "numpy.savez_compressed",
        "numpy.savetxt",
        "os.makedirs",
        "os.mkdir",
        "os.remove",
        "os.unlink",
        "os.rename",
        "os.replace",
        "os.rmdir",
        "os.removedirs",
        "os.system",
        "shutil.copy",
        "shutil.copy2",
        "shutil.copyfile",
        "shutil.copytree",
        "shutil.move",
        "shutil.rmtree",
        "sys.stdout.write",
        "sys.stderr.write",
        "io.open",
        # tf.io.gfile is a Python file API, unlike the graph ops tf.io.read_file/write_file.
        "tensorflow.io.gfile.GFile",
        "tensorflow.io.gfile.makedirs",
        "tensorflow.io.gfile.mkdir",
        "tensorflow.io.gfile.remove",
        "tensorflow.io.gfile.rename",
        "tensorflow.io.gfile.copy",
        "tensorflow.io.gfile.rmtree",
        "tensorflow.gfile.GFile",
        "tensorflow.gfile.Open",
    }
)
_FILE_FACTORIES = (
    "builtins.open",
    "io.open",
    "tensorflow.io.gfile.GFile",
    "tensorflow.gfile.GFile",
)
_PATH_WRITES = frozenset({"write_text", "write_bytes", "mkdir", "touch", "unlink"})


class PythonIoInTraced(Rule):
    """File and console I/O in traced code happens once, while tracing."""

    code = "TFG108"
    name = "python-io-in-traced"
    severity = Severity.WARNING

    VALID = [
        """
import tensorflow as tf

@tf.function
def save(x, path):
    tf.io.write_file(path, tf.io.serialize_tensor(x))
    ta = tf.TensorArray(tf.float32, size=1)
    ta = ta.write(0, x)
    return ta.stack()
""",
        """
import json
import tensorflow as tf

@tf.function
def step(x):
    return x * 2

def train(x):
    with open("log.json", "w") as fh:
        json.dump({"loss": float(step(x))}, fh)  # eager: fine
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    with open("trace.log", "a") as fh:  # TFG108
        fh.write("step\\n")  # TFG108
    return x
""",
        """
import os
import numpy as np
import tensorflow as tf

@tf.function
def dump(x):
    os.makedirs("out", exist_ok=True)  # TFG108
    np.save("out/x.npy", x)  # TFG108
    return x
""",
    ]

    def _is_file(self, receiver: cst.BaseExpression, fn: TracedFunction) -> bool:
        for value in values_of(self.ctx, receiver, fn):
            if isinstance(value, cst.Call) and self.ctx.resolve(value.func).is_(*_FILE_FACTORIES):
                return True
        return False

    def _is_path(self, receiver: cst.BaseExpression, fn: TracedFunction) -> bool:
        candidates = [receiver, *values_of(self.ctx, receiver, fn)]
        return any(
            isinstance(v, cst.Call) and self.ctx.resolve(v.func).startswith("pathlib.")
            for v in candidates
        )

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        func = node.func
        res = self.ctx.resolve(func)
        shown: str | None = None
        if res.is_builtin("open") or res.is_builtin("input") or res.is_(*_IO_CALLS):
            shown = dotted(func)
        elif isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in ("write", "writelines", "flush") and self._is_file(func.value, fn):
                shown = dotted(func) or f"file.{method}"
            elif method in _PATH_WRITES and self._is_path(func.value, fn):
                shown = f"Path.{method}"
        if shown is None:
            return
        if traced_of(self.ctx).setup.covers(node, fn):
            return  # one-time setup: reading a vocabulary or building a plugin, then cached
        self.report(
            node,
            f"{shown}() does its I/O only while tracing {fn.where}, not on every call; "
            "use tf.io.write_file()/tf.io.read_file() or do the I/O outside the traced function",
            fn,
        )
