from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.core.finding import Severity
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.names import dotted, last_name
from tflint_graph.model.values import call_mode, mode_writes, names_a_class, values_of
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
import tensorflow_text as tft

def tokenize(example):
    # The tokenizer op is built from the model's bytes while the callback is traced.
    tokenizer = tft.SentencepieceTokenizer(model=tf.io.gfile.GFile("sp.model", "rb").read())
    return tokenizer.tokenize(example["text"])

ds = tf.data.Dataset.from_tensor_slices({"text": ["a b"]}).map(tokenize)
""",
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
def encode(text):
    vocab = tf.constant(open("vocab.txt").read())  # TFG108
    return tf.strings.join([text, vocab])
""",
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

    def _builds_an_object(self, node: cst.Call) -> bool:
        """``node`` opens a file for reading, and what ``.read()`` gives goes straight into a
        construction (``tft.SentencepieceTokenizer(model=GFile(path, "rb").read())``): the
        trace builds the op from the file's bytes once, as the author means; the fix the rule
        would suggest (``tf.io.read_file``) cannot give a constructor its bytes."""
        if _writes(node):
            return False
        attr = self.ctx.parent(node)
        read = self.ctx.parent(attr) if isinstance(attr, cst.Attribute) else None
        if not (
            isinstance(read, cst.Call)
            and read.func is attr
            and isinstance(attr, cst.Attribute)
            and attr.attr.value == "read"
        ):
            return False
        arg = self.ctx.parent(read)
        call = self.ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        return isinstance(call, cst.Call) and names_a_class(call.func)

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
        if self._builds_an_object(node):
            return  # `Tokenizer(model=GFile(path, "rb").read())`: the graph's op, built once
        self.report(
            node,
            f"{shown}() does its I/O only while tracing {fn.where}, not on every call; "
            "use tf.io.write_file()/tf.io.read_file() or do the I/O outside the traced function",
            fn,
        )


def _writes(call: cst.Call) -> bool:
    """``open``/``GFile`` with a mode that writes or appends (``"w"``, ``"ab"``, ``"r+"``); a
    call that is no such opener counts as writing (``np.save``, ``os.makedirs``)."""
    mode = call_mode(call)
    if mode is None:
        return not _opener(call)
    return mode_writes(mode)


def _opener(call: cst.Call) -> bool:
    return last_name(call.func) in ("open", "GFile")
