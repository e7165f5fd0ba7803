"""Keras objects a script only ever calls eagerly (SPEC §1: Keras traces ``call`` inside
``fit``/``predict``; Keras 3 runs ``call`` as Python on eager tensors): in a notebook or a
script no other module can import, that never hands Keras anything to trace, their methods are
not traced code."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tflint_graph import Config, lint_paths

LAYER = """
import numpy as np
import tensorflow as tf


class Scale(tf.keras.layers.Layer):
    def call(self, x):
        return x * np.array(x).max()


layer = Scale()
"""


def _codes(tmp_path: Path, name: str, tail: str) -> set[str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(LAYER) + textwrap.dedent(tail), encoding="utf-8")
    return {f.code for f in lint_paths([path], Config()) if f.code.startswith("TFG2")}


EAGER = """
with tf.GradientTape() as tape:
    y = layer(tf.ones([2, 2]))
"""


@pytest.mark.parametrize("name", ["demo-eager.py", "01-overview.py"])
def test_an_unimportable_script_calling_its_layer_eagerly_has_no_traced_keras_code(
    tmp_path: Path, name: str
) -> None:
    assert _codes(tmp_path, name, EAGER) == set()


@pytest.mark.parametrize(
    "tail",
    [
        "model = tf.keras.Sequential([layer])\nmodel.compile('sgd', 'mse')\n",
        "ds = tf.data.Dataset.from_tensor_slices(tf.ones([4, 2])).map(lambda x: layer(x))\n",
        "inputs = tf.keras.Input((2,))\nout = layer(inputs)\n",
        "step = tf.function(lambda x: layer(x))\n",
        "@tf.function\ndef step(x):\n    return layer(x)\n",
        "layer.build((None, 2))\n",
    ],
)
def test_anything_that_traces_it_keeps_it_traced(tmp_path: Path, tail: str) -> None:
    assert _codes(tmp_path, "demo-eager.py", tail) == {"TFG204"}


def test_a_module_others_can_import_keeps_its_keras_code_traced(tmp_path: Path) -> None:
    # Another module may import the class and fit it.
    assert _codes(tmp_path, "layers.py", EAGER) == {"TFG204"}


def test_a_dataset_callback_that_does_not_use_the_layer_changes_nothing(tmp_path: Path) -> None:
    tail = EAGER + "ds = tf.data.Dataset.range(3).map(lambda i: i * 2)\n"
    assert _codes(tmp_path, "demo-eager.py", tail) == set()


def _notebook(tmp_path: Path, cells: list[str]) -> set[str]:
    doc = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "source": c,
                "outputs": [],
                "execution_count": None,
            }
            for c in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "tutorial.ipynb"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return {f.code for f in lint_paths([path], Config()) if f.code.startswith("TFG2")}


def test_a_notebook_that_calls_its_model_eagerly(tmp_path: Path) -> None:
    assert _notebook(tmp_path, [textwrap.dedent(LAYER), textwrap.dedent(EAGER)]) == set()
    fitted = textwrap.dedent(EAGER) + "model = tf.keras.Sequential([layer])\nmodel.fit(x, y)\n"
    assert _notebook(tmp_path, [textwrap.dedent(LAYER), fitted]) == {"TFG204"}


def test_a_class_nothing_constructs_in_an_unimportable_script_is_dead(tmp_path: Path) -> None:
    # An exercise's skeleton beside code that fits another layer: nothing makes a
    # `Skeleton`, and no other module can import `exercise-1.py` to make one.
    skeleton = """
    class Skeleton(tf.keras.layers.Layer):
        def call(self, x):
            return x * np.array(x).min()


    model = tf.keras.Sequential([layer])
    model.compile("sgd", "mse")
    """

    def reported(name: str) -> list[str]:
        path = tmp_path / name
        path.write_text(textwrap.dedent(LAYER) + textwrap.dedent(skeleton), encoding="utf-8")
        lines = path.read_text(encoding="utf-8").splitlines()
        return sorted(
            lines[f.line - 1].strip() for f in lint_paths([path], Config()) if f.code == "TFG204"
        )

    scale, unused = "return x * np.array(x).max()", "return x * np.array(x).min()"
    assert reported("exercise-1.py") == [scale]
    assert reported("exercise_1.py") == sorted([scale, unused])  # importable: may be used


# Another model of the same notebook is fitted: the module as a whole hands Keras something,
# so what decides is how the module uses each class's own instances.
FITS_ANOTHER = """
other = tf.keras.Sequential([tf.keras.layers.Dense(1)])
other.compile("sgd", "mse")
"""

STEPPED = """
class Net(tf.keras.Model):
    def train_step(self, data):
        loss = tf.reduce_sum(data)
        self.history.append(loss.numpy())
        return {"loss": loss}


net = Net()
net.history = []
for _ in range(3):
    net.train_step(tf.ones([2]))
print(net.history)
"""


def test_a_model_only_called_or_stepped_eagerly_beside_a_fitted_one(tmp_path: Path) -> None:
    assert _codes(tmp_path, "demo-eager.py", EAGER + FITS_ANOTHER) == set()
    assert _notebook(tmp_path, [textwrap.dedent(LAYER), EAGER, STEPPED, FITS_ANOTHER]) == set()


@pytest.mark.parametrize(
    "use",
    [
        "step = tf.function(net.train_step)\n",
        "net.compile('sgd')\nnet.fit(tf.ones([4, 2]), epochs=1)\n",
        "tf.saved_model.save(net, '/tmp/net')\n",
        "nets = [net]\n",
        "@tf.function\ndef run(x):\n    return net.train_step(x)\n",
        "def run(x):\n    return net.train_step(x)\n\nstep = tf.function(run)\n",
        "class Wider(Net):\n    pass\n",
    ],
)
def test_an_instance_handed_on_keeps_the_class_traced(tmp_path: Path, use: str) -> None:
    cells = [textwrap.dedent(LAYER), STEPPED, FITS_ANOTHER, use]
    assert _notebook(tmp_path, cells) == {"TFG202"}


def test_calling_an_instance_beside_the_functional_api_keeps_it_traced(tmp_path: Path) -> None:
    # `layer(inputs)` on a `keras.Input` is a symbolic call: Keras traces `call` there.
    tail = EAGER + "inputs = tf.keras.Input((2,))\nmodel = tf.keras.Model(inputs, inputs * 2)\n"
    assert _codes(tmp_path, "demo-eager.py", tail) == {"TFG204"}
