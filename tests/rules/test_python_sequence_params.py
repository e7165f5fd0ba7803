"""A ``tf.function`` parameter the body iterates where only a Python sequence can be iterated
while tracing (``zip``, ``enumerate``, ``list``, a comprehension) holds a list or tuple: a
``for`` over it unrolls, so growing a list in that loop is fine (no TFG207)."""

from __future__ import annotations

import pytest

from tests.helpers import dedent
from tflint_graph import lint_source


@pytest.mark.parametrize(
    ("use", "reported"),
    [
        ("names = [v.name for v in variables]", False),
        ("pairs = list(zip(variables, range(3)))", False),
        ("for i, v in enumerate(variables):\n        pass", False),
        ("ordered = sorted(variables, key=str)", False),
        # nothing says it is a Python sequence: a tensor, whose loop becomes a tf.while_loop
        ("size = tf.size(variables)", True),
        # the name is rebound first: the comprehension says nothing of the parameter
        ("variables = tf.stack(variables)\n    names = [v for v in variables]", True),
    ],
)
def test_a_parameter_iterated_as_a_python_sequence(use: str, reported: bool) -> None:
    source = dedent(
        """
        import tensorflow as tf


        @tf.function
        def summarize(step, variables):
            USE
            deps = []
            for v in variables:
                deps.append(tf.reduce_mean(v))
            return deps
        """
    ).replace("USE", use)
    got = [f for f in lint_source(source, "summaries.py") if f.code == "TFG207"]
    assert bool(got) is reported
