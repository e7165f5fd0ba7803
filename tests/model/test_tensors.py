"""Tensor-value inference (tflint_graph.model.tensors) on small traced functions."""

from __future__ import annotations

import libcst as cst
import pytest

from tests.helpers import dedent
from tflint_graph.core.config import Config
from tflint_graph.core.vocabulary import canonical
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.tensors import Kind, tensors
from tflint_graph.model.tf_returns import FLAGS, PYTHON_KINDS, RETURNS
from tflint_graph.traced import find_traced


def kinds(source: str, function: str) -> dict[str, Kind | None]:
    """Kind of every name *returned* (``return a, b, c``) by ``function``."""
    source = dedent(source)
    ctx = ModuleContext("m.py", source, cst.parse_module(source), Config())
    ctx.traced = find_traced(ctx)
    fn = next(t for t in ctx.traced.values() if t.display == f"{function}()")
    inference = tensors(ctx, fn)
    out: dict[str, Kind | None] = {}

    class _Returns(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            value = node.value
            elements = value.elements if isinstance(value, cst.Tuple) else []
            for el in elements:
                out[ctx.code(el.value)] = inference.kind(el.value)

    fn.node.visit(_Returns())
    return out


def test_parameters_of_tf_function_roots() -> None:
    got = kinds(
        """
        import tensorflow as tf

        @tf.function
        def step(x, y, scale=2.0, training=False, *, n: int = 3):
            return x, y, scale, training, n
        """,
        "step",
    )
    assert got == {"x": Kind.TENSOR, "y": Kind.TENSOR, "scale": None, "training": None, "n": None}


def test_annotations_and_input_signature_decide() -> None:
    got = kinds(
        """
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def serve(x, k: int = 1):
            return x, k
        """,
        "serve",
    )
    assert got == {"x": Kind.TENSOR, "k": None}
    got = kinds(
        """
        import tensorflow as tf

        @tf.function
        def step(x: tf.Tensor, steps: int, names: list):
            return x, steps, names
        """,
        "step",
    )
    assert got == {"x": Kind.TENSOR, "steps": None, "names": None}
    # A union of Python types stays a Python value in the signature; one with a tensor
    # member may hold a tensor.
    got = kinds(
        """
        from typing import Optional, Tuple, Union
        import tensorflow as tf

        @tf.function
        def masks(
            shape: Tuple[int], grid: Union[int, Tuple[int]], n: int | None, x: Union[int, tf.Tensor]
        ):
            return shape, grid, n, x
        """,
        "masks",
    )
    assert got == {"shape": None, "grid": None, "n": None, "x": Kind.TENSOR}


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        # A signature a name holds is read like a literal one.
        ("sig = [tf.TensorSpec([None, 3])]", Kind.TENSOR),
        # A structure of specs (a namedtuple of TensorSpecs): unpacking it is Python.
        ("sig = [Batch(tf.TensorSpec([None]), tf.TensorSpec([None]))]", Kind.STRUCTURE),
        # One the code does not spell out: tensors, as without a signature.
        ("sig = make_signature()", Kind.TENSOR),
    ],
)
def test_an_input_signature_held_by_a_name(signature: str, expected: Kind) -> None:
    got = kinds(
        f"""
        import collections
        import tensorflow as tf

        Batch = collections.namedtuple("Batch", ["x", "y"])

        def step(batch):
            return batch, 1

        def build():
            {signature}
            return tf.function(step, input_signature=sig)
        """,
        "step",
    )
    assert got["batch"] is expected


def test_ops_methods_operators_and_static_facts() -> None:
    got = kinds(
        """
        import tensorflow as tf
        from tensorflow import keras

        @tf.function
        def step(x):
            a = tf.reduce_sum(x)
            b = x * 2 + 1
            c = a > 0
            d = x[0]
            e = x.shape[0]
            f = x.dtype
            g = keras.ops.mean(x)
            h = tf.unstack(x)
            i = tf.executing_eagerly()
            j = len([1, 2])
            k = tf.reshape(x, [-1]).numpy
            m = x is None
            return a, b, c, d, e, f, g, h, i, j, m
        """,
        "step",
    )
    assert got == {
        "a": Kind.TENSOR,
        "b": Kind.TENSOR,
        "c": Kind.TENSOR,
        "d": Kind.TENSOR,
        "e": None,
        "f": None,
        "g": Kind.TENSOR,
        "h": Kind.SEQUENCE,
        "i": None,
        "j": None,
        "m": None,
    }


def test_names_assigned_from_mixed_values_are_unknown() -> None:
    got = kinds(
        """
        import tensorflow as tf

        LIMIT = tf.constant(3)

        @tf.function
        def step(x, flag=True):
            y = tf.zeros([2])
            if flag:
                y = 0.0
            z = x
            z = z + 1
            return y, z, LIMIT
        """,
        "step",
    )
    assert got == {"y": None, "z": Kind.TENSOR, "LIMIT": None}


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("class Net(tf.keras.layers.Layer):\n    def call(self, inputs):", Kind.STRUCTURE),
        ("class Net(tf.keras.Model):\n    def train_step(self, inputs):", Kind.STRUCTURE),
        ("class Net(tf.keras.Model):\n    def test_step(self, inputs):", Kind.STRUCTURE),
    ],
)
def test_keras_inputs_may_be_structures(header: str, expected: Kind | None) -> None:
    source = "import tensorflow as tf\n\n" + header + "\n        return inputs, 1\n"
    name = header.split("def ")[1].split("(")[0]
    assert kinds(source, name)["inputs"] is expected


def test_numbers_and_order_make_a_structure_a_tensor() -> None:
    """A Python list or tuple supports no ordering against a number and no arithmetic with
    one but repetition: Keras inputs and dataset elements used so are tensors."""
    got = kinds(
        """
        import tensorflow as tf

        class Net(tf.keras.layers.Layer):
            def call(self, inputs):
                a = inputs > 0
                b = inputs / 255
                c = 1.0 - inputs
                d = inputs * 2
                e = inputs + inputs
                f = inputs is None
                return a, b, c, d, e, f, inputs
        """,
        "call",
    )
    assert got == {
        "a": Kind.TENSOR,
        "b": Kind.TENSOR,
        "c": Kind.TENSOR,
        "d": None,  # repetition of a list
        "e": None,  # concatenation of lists
        "f": None,
        "inputs": Kind.STRUCTURE,
    }


def test_dataset_callback_elements_may_be_structures() -> None:
    got = kinds(
        """
        import tensorflow as tf

        def parse(example):
            return example, 1

        ds = tf.data.TFRecordDataset("f").map(parse)
        """,
        "parse",
    )
    assert got["example"] is Kind.STRUCTURE


def test_callee_parameters_take_what_every_traced_call_passes() -> None:
    got = kinds(
        """
        import tensorflow as tf

        def helper(v, w, scale=2.0):
            return v, w, scale, 1

        @tf.function
        def step(x, data):
            a, b = data
            return helper(x, a), helper(x * 2, b, scale=3.0)
        """,
        "helper",
    )
    # v: a tensor from both calls; w: what unpacking gives (a tensor or a structure: not
    # taken for a tensor); scale: a Python number (one call leaves the default).
    assert got["v"] is Kind.TENSOR
    assert got["w"] is None
    assert got["scale"] is None


@pytest.mark.parametrize(
    "extra",
    [
        # Another traced call passes a Python value.
        "@tf.function\ndef other(x):\n    return helper(3)\n",
        # Traced code hands the helper on instead of calling it: TensorFlow calls it.
        "@tf.function\ndef mapped(x):\n    return tf.map_fn(helper, x)\n",
    ],
)
def test_callee_parameters_stay_unknown_unless_every_way_in_is_a_call_with_a_tensor(
    extra: str,
) -> None:
    source = (
        "import tensorflow as tf\n\n"
        "def helper(v):\n    return v, 1\n\n"
        "@tf.function\ndef step(x):\n    return helper(x)\n\n" + extra
    )
    assert kinds(source, "helper")["v"] is None


def test_a_staticmethod_s_parameters_line_up_with_the_call_s_arguments() -> None:
    got = kinds(
        """
        import tensorflow as tf

        class Ops:
            @staticmethod
            def scale(x, factor):
                return x, factor, 1

        @tf.function
        def step(x):
            return Ops.scale(x, 2.0)
        """,
        "scale",
    )
    # No `self`: the tensor goes to x, the Python number to factor.
    assert (got["x"], got["factor"]) == (Kind.TENSOR, None)


def test_recursive_callees_do_not_loop() -> None:
    got = kinds(
        """
        import tensorflow as tf

        def down(v, n):
            if n == 0:
                return v, n
            return up(v, n - 1)

        def up(v, n):
            return down(v + 1, n)

        @tf.function
        def step(x):
            return down(x, 3)
        """,
        "down",
    )
    assert got["n"] is None


# -- the verified table of model.tf_returns ----------------------------------------------


def test_table_kinds_are_known() -> None:
    known = PYTHON_KINDS | {"sequence", "structure", "dict", "tensor"}
    assert set(RETURNS.values()) <= known
    for name, (_, _, _, when_true, when_false) in FLAGS.items():
        assert {when_true, when_false} <= known, name
    # Names are canonical: the compat spellings are rewritten before the lookup.
    assert all(canonical(name) == name for name in (*RETURNS, *FLAGS))


@pytest.mark.parametrize(
    "header",
    [
        "import tensorflow as tf",
        "import tensorflow.compat.v1 as tf1\nimport tensorflow as tf",
        "from tensorflow.compat import v1 as tf1\nimport tensorflow as tf",
    ],
)
def test_apis_that_return_python_values_are_not_tensors(header: str) -> None:
    v1 = "tf1" if "tf1" in header else "tf.compat.v1"
    got = kinds(
        f"""
{header}

@tf.function
def step(x):
    a = {v1}.executing_eagerly_outside_functions()
    b = tf.config.list_physical_devices("GPU")
    c = tf.distribute.has_strategy()
    d = tf.get_static_value(x)
    e = {v1}.trainable_variables()
    f = tf.nest.flatten(x)
    g = tf.shape(x)
    return a, b, c, d, e, f, g
""",
        "step",
    )
    assert got == {
        "a": None,
        "b": None,
        "c": None,
        "d": None,
        "e": None,
        "f": None,
        "g": Kind.TENSOR,
    }


def test_python_sequences_of_tensors_and_their_items() -> None:
    got = kinds(
        """
        import tensorflow as tf
        from tensorflow.linalg import normalize

        @tf.function
        def step(x):
            parts = tf.split(x, 2)
            a, b = tf.split(x, 2)
            first, *rest = tf.unstack(x)
            head, tail = parts
            p0 = tf.split(x, 2)[0]
            later = parts[1:]
            unit, norm = normalize(x)
            mean, var = tf.compat.v1.nn.moments(x, [0])
            top = tf.math.top_k(x, 2)
            vals = top.values
            for part in tf.split(x, 3):
                pass
            for i, row in enumerate(parts):
                pass
            return parts, a, first, rest, head, p0, later, unit, norm, mean, top, vals, part, row, i
        """,
        "step",
    )
    assert got == {
        "parts": Kind.SEQUENCE,
        "a": Kind.TENSOR,
        "first": Kind.TENSOR,
        "rest": Kind.SEQUENCE,
        "head": Kind.TENSOR,
        "p0": Kind.TENSOR,
        "later": Kind.SEQUENCE,
        "unit": Kind.TENSOR,
        "norm": Kind.TENSOR,
        "mean": Kind.TENSOR,
        "top": Kind.SEQUENCE,
        "vals": Kind.TENSOR,
        "part": Kind.TENSOR,
        "row": Kind.TENSOR,
        "i": None,
    }


def test_structures_and_flag_dependent_results() -> None:
    got = kinds(
        """
        import tensorflow as tf

        @tf.function
        def step(x, pred, uv=True):
            s = tf.linalg.svd(x)
            t = tf.linalg.svd(x, compute_uv=False)
            u = tf.linalg.svd(x, False, uv)
            e = tf.linalg.eigh_tridiagonal(x, x)
            f = tf.linalg.eigh_tridiagonal(x, x, eigvals_only=False)
            c = tf.cond(pred, lambda: x, lambda: x)
            c1, c2 = tf.cond(pred, lambda: (x, x), lambda: (x, x))
            feats = tf.io.parse_single_example(x, {})
            seed = tf.random.experimental.stateless_split([1, 2])
            return s, t, u, e, f, c, c1, feats, seed
        """,
        "step",
    )
    assert got == {
        "s": Kind.SEQUENCE,
        "t": Kind.TENSOR,
        "u": Kind.STRUCTURE,
        "e": Kind.TENSOR,
        "f": Kind.SEQUENCE,
        "c": Kind.STRUCTURE,
        "c1": Kind.STRUCTURE,
        "feats": Kind.STRUCTURE,
        "seed": Kind.TENSOR,
    }


def test_names_bound_to_a_sequence_and_a_tensor_are_structures() -> None:
    got = kinds(
        """
        import tensorflow as tf

        @tf.function
        def step(x, flag=True):
            y = tf.split(x, 2)
            if flag:
                y = tf.concat([x, x], 0)
            return y, 1
        """,
        "step",
    )
    assert got["y"] is Kind.STRUCTURE
