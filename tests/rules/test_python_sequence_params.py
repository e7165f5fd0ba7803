"""A ``tf.function`` parameter the body iterates where only a Python sequence can be iterated
while tracing (``zip``, ``enumerate``, ``list``, a comprehension) holds a list or tuple: a
``for`` over it unrolls, so growing a list in that loop is fine (no TFG207)."""

from __future__ import annotations

import pytest

from tests.helpers import dedent, expected
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


@pytest.mark.parametrize(
    ("body", "reported"),
    [
        # zipped: a list of feature maps, whatever the annotation says
        ("return tf.add_n([tf.reduce_mean((g - t) ** 2) for g, t in zip(gen, tgt)])", False),
        ("return [g * 2 for g in gen]", False),
        # nothing iterates it in Python: the annotation stands, a tensor (TFG204)
        ("return np.mean(gen) - tgt", True),
        ("return np.mean([g for g in gen])", False),
    ],
)
def test_a_tensor_annotation_on_what_the_body_zips_is_loose(body: str, reported: bool) -> None:
    source = dedent(
        """
        import numpy as np
        import tensorflow as tf
        from tensorflow import Tensor


        def style_loss(gen: Tensor, tgt: Tensor):
            BODY


        @tf.function
        def train(img, targets):
            return style_loss([img, img], targets)
        """
    ).replace("BODY", body)
    got = [f for f in lint_source(source, "losses.py") if f.code in ("TFG203", "TFG204")]
    assert bool(got) is reported


@pytest.mark.parametrize(
    "source",
    [
        # a call passes tensors
        """
        import tensorflow as tf

        @tf.function
        def pairwise(a: tf.Tensor, b: tf.Tensor):
            return tf.stack([x + y for x, y in zip(a, b)])  # TFG203

        pairwise(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))
        """,
        # the input_signature says so
        """
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def running(values: tf.Tensor):
            return [v * i for i, v in enumerate(values)]  # TFG203
        """,
        # Keras hands call() what the author annotates
        """
        import keras
        import tensorflow as tf

        class RowSum(keras.layers.Layer):
            def call(self, x: tf.Tensor):
                return tf.stack([tf.reduce_sum(r) for r in x])  # TFG203
        """,
    ],
)
def test_other_evidence_of_a_tensor_outweighs_a_loose_annotation(source: str) -> None:
    source = dedent(source)
    got = {(f.line, f.code) for f in lint_source(source, "ops.py") if f.code == "TFG203"}
    assert got == expected(source)


def test_a_parameter_narrowed_to_a_python_number_is_one() -> None:
    # No tensor is an `int`: after `isinstance(factor, int) and`, `factor` is a Python int.
    source = dedent(
        """
        import tensorflow as tf

        @tf.function
        def upsample(x, factor):
            assert isinstance(factor, int) and factor >= 1
            return tf.repeat(x, factor, axis=1)

        @tf.function
        def crop(x, size):
            if isinstance(size, (int, float)) and size > 0:
                x = x[:size]
            assert isinstance(size, list) or size > 0  # TFG201
            return x
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py")}
    assert got == expected(source)


def test_a_name_rebound_inside_the_narrowed_block_is_what_it_was_bound_to() -> None:
    source = dedent(
        """
        import tensorflow as tf

        @tf.function(autograph=False)
        def scale(x, factor):
            if isinstance(factor, (int, float)):
                factor = tf.constant(factor, tf.float32) * tf.reduce_max(x)
                if factor > 1.0:  # TFG201
                    x = x / factor
            return x
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py")}
    assert got == expected(source)


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        ("_step([tf.ones([2]), tf.zeros([2])])", False),
        ("images = [train[k] for k in keys]\n    _step(images)", False),
        ("_step(list(train.values()))", False),
        # another call passes a tensor: the loop over it is a graph loop
        ("_step([tf.ones([2])])\n    _step(tf.ones([3, 2]))", True),
        ("_step(batch)", True),  # unknown
        # handed on: tf.data calls it with tensors
        ("_step([tf.ones([2])])\n    ds.map(_step)", True),
        ("_step([tf.ones([2])])\n    run = functools.partial(_step)", True),
    ],
)
def test_a_parameter_every_call_passes_a_python_list(call: str, reported: bool) -> None:
    source = dedent(
        """
        import functools

        import tensorflow as tf

        @tf.function
        def _step(image_list):
            processed = []
            for img in image_list:
                processed.append(img * 2)  # TFG207
            return tf.concat(processed, 0)

        def train(train, keys, batch, ds):
            CALL
        """
    ).replace("CALL", call)
    got = {(f.line, f.code) for f in lint_source(source, "m.py")}
    assert got == (expected(source) if reported else set())


@pytest.mark.parametrize(
    ("decorator", "name", "path", "reported"),
    [
        ("@tf.function", "step", "train-script.py", False),  # no module can import it
        ("@tf.function", "step", "m.py", True),  # another module may call it with a tensor
        ("@tf.function(input_signature=[tf.TensorSpec([None, 2])])", "_step", "m.py", True),
    ],
)
def test_a_python_list_parameter_needs_every_call_in_sight(
    decorator: str, name: str, path: str, reported: bool
) -> None:
    source = dedent(
        """
        import tensorflow as tf

        DECORATOR
        def NAME(image_list):
            processed = []
            for img in image_list:
                processed.append(img * 2)  # TFG207
            return tf.concat(processed, 0)

        NAME([tf.ones([2]), tf.zeros([2])])
        """
    )
    source = source.replace("DECORATOR", decorator).replace("NAME", name)
    got = {(f.line, f.code) for f in lint_source(source, path)}
    assert got == (expected(source) if reported else set())
