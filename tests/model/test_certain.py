"""Which bare tf.function parameters are surely tensors (tflint_graph.model.certain)."""

from __future__ import annotations

import libcst as cst
import pytest

from tests.helpers import dedent, expected
from tflint_graph import lint_source
from tflint_graph.core.config import Config
from tflint_graph.model.certain import certain_tensors
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.tensors import Kind
from tflint_graph.traced import find_traced, traced_of


def param_kinds(source: str, function: str) -> dict[str, Kind | None]:
    ctx = ModuleContext("m.py", source, cst.parse_module(source), Config())
    ctx.traced = find_traced(ctx)
    fn = next(t for t in ctx.traced.values() if t.display == f"{function}()")
    inference = certain_tensors(ctx, fn, traced_of(ctx).definitions)
    return {p.name.value: k for p, k in inference.params().items()}


_STEP = "import tensorflow as tf\n\n@tf.function\ndef step(x, flag=False):\n"


@pytest.mark.parametrize(
    "body",
    [
        "n = x.shape[0]\n    return x * n",
        "print(x.dtype)\n    return x",
        "with tf.name_scope('s'):\n        r = x.ndim\n    return r",
        "return x[:, 0]",
        "return tf.reduce_sum(x[..., 1])",
        "for i in range(x.shape[0]):\n        pass\n    return x",
    ],
)
def test_the_body_reads_what_only_a_tensor_has(body: str) -> None:
    got = param_kinds(_STEP + "    " + body + "\n", "step")
    assert got["x"] is Kind.TENSOR


@pytest.mark.parametrize(
    "body",
    [
        "return x",
        "if flag:\n        return x.shape\n    return x",
        "if len(x) == 2:\n        return x\n    return x.shape",
        "return x.shape if flag else x",
        "return flag and x.dtype",
        "try:\n        return x.shape\n    except AttributeError:\n        return x",
        "return [v.shape for v in x]",
        "x = tf.stack(x)\n    return x.shape",
        "return x[0, 1]",
    ],
)
def test_reads_that_may_not_run_or_suit_python_values_say_nothing(body: str) -> None:
    got = param_kinds(_STEP + "    " + body + "\n", "step")
    assert got["x"] is Kind.STRUCTURE


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("step(tf.constant([1.0]))", Kind.TENSOR),
        ("step(np.zeros([3]))", Kind.TENSOR),
        ("images = tf.zeros([2, 3])\nstep(images * 2.0)", Kind.TENSOR),
        ("step(x=tf.ones([2])[0])", Kind.TENSOR),
        ("step.get_concrete_function(tf.TensorSpec([None]))", Kind.TENSOR),
        ("step([1.0, 2.0])", Kind.STRUCTURE),
        ("step((a, b))", Kind.STRUCTURE),
        ("step(3)", Kind.STRUCTURE),
        ("step(load())", Kind.STRUCTURE),
        ("step(tf.unstack(t))", Kind.STRUCTURE),
        ("other(tf.constant([1.0]))", Kind.STRUCTURE),
    ],
)
def test_a_call_in_the_module_that_passes_a_tensor(call: str, expected: Kind) -> None:
    source = dedent(
        """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def step(x):
            return x

        @tf.function
        def other(x):
            return x
        """
    )
    got = param_kinds(source + call + "\n", "step")
    assert got["x"] is expected


def test_a_method_called_through_self_maps_arguments_past_self() -> None:
    got = param_kinds(
        dedent(
            """
        import tensorflow as tf

        class Runner(tf.Module):
            @tf.function
            def step(self, x, y):
                return x, y

            def run(self):
                return self.step([1.0], tf.ones([2]))
        """
        ),
        "step",
    )
    assert got == {"self": None, "x": Kind.STRUCTURE, "y": Kind.TENSOR}


def test_arithmetic_on_an_unproven_parameter_may_be_a_number_where_numbers_work() -> None:
    # `epoch` may be the Python int every call passes: `epoch + 1` may be one too, and
    # min() of it works while tracing; with evidence (`epoch.shape`) it is a tensor's sum.
    source = dedent(
        """
        import tensorflow as tf

        import config

        WARMUP = 5

        @tf.function
        def step(x, epoch):
            ramp = min(1.0, (epoch + 1) / 5)
            return x * ramp * min(1.0, epoch / WARMUP)

        @tf.function
        def shown(x, epoch):
            rank = epoch.shape.rank
            ramp = min(1.0, (epoch + 1) / 5)  # TFG203
            return x * ramp

        @tf.function
        def renamed(x, epoch):
            epoch = epoch + 1
            e = epoch
            return x * min(1.0, e / 5)

        # A setting of an imported module is a Python number while tracing too.
        @tf.function
        def configured(x, epoch):
            return x * min(1.0, (epoch + 1) / config.WARMUP_STEPS)

        @tf.function
        def summed(x):
            return min(1.0, tf.reduce_sum(x) / config.WARMUP_STEPS)  # TFG203

        # Iterating or unpacking fails for a number too: the tensor it must be is reported.
        @tf.function
        def rows(x):
            return [tf.reduce_sum(r) for r in x / 255.0]  # TFG203

        @tf.function
        def halves(x):
            a, b = x * 2.0  # TFG203
            return a + b

        def fit(x):
            for epoch in range(3):
                step(x, epoch)
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py") if f.code.startswith("TFG20")}
    assert got == expected(source)
