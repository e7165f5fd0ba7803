"""A layer whose own ``__call__`` never runs ``Layer.__call__`` (an image processor that
calls ``self.call`` on file names and arrays) is not traced by Keras: its ``call`` is traced
only when traced code calls the object, through that ``__call__``.  Nor is a Keras method
that says first thing it must run eagerly (a NumPy-computed metric)."""

from __future__ import annotations

import pytest

from tests.helpers import dedent
from tflint_graph import lint_source

PROCESSOR = dedent(
    """
    import keras
    import tensorflow as tf


    class Processor(keras.layers.Layer):
        def __call__(self, image):
            return self.call(image)

        def call(self, image):
            peak = keras.ops.convert_to_numpy(keras.ops.max(image)).item()  # line 10
            return image / peak
    """
)


def _lines(source: str, code: str = "TFG204") -> set[int]:
    return {f.line for f in lint_source(source, "proc.py") if f.code == code}


def test_a_layer_whose_call_is_bypassed_is_not_a_root() -> None:
    assert _lines(PROCESSOR) == set()


def test_it_is_traced_when_traced_code_calls_the_object() -> None:
    traced = PROCESSOR + dedent(
        """

        proc = Processor()


        @tf.function
        def prepare(image):
            return proc(image)
        """
    )
    assert _lines(traced) == {10}


def test_a_call_that_runs_the_base_call_keeps_the_root() -> None:
    wrapped = PROCESSOR.replace(
        "return self.call(image)", "return super().__call__(tf.convert_to_tensor(image))"
    )
    assert _lines(wrapped) == {10}


DECLARED = dedent(
    """
    import warnings

    import tensorflow as tf


    class Geometric(tf.keras.metrics.Metric):
        def update_state(self, reference, measurement):
            \"\"\"Compares the shapes of the objects with NumPy.\"\"\"
            if not tf.executing_eagerly():
                warnings.warn("run eagerly: set model.run_eagerly = True")
            reference = reference.numpy()  # line 11
            return reference
    """
)


@pytest.mark.parametrize(
    ("guard", "reported"),
    [
        ("if not tf.executing_eagerly():", False),
        ("if tf.inside_function():", False),
        ("if tf.executing_eagerly():", True),  # warns when eager: says nothing of tracing
        ("if self.strict:", True),
    ],
)
def test_a_method_that_says_it_runs_eagerly_is_not_a_root(guard: str, reported: bool) -> None:
    source = DECLARED.replace("if not tf.executing_eagerly():", guard)
    found = {f.line for f in lint_source(source, "metrics.py") if f.code == "TFG202"}
    assert found == ({11} if reported else set())
