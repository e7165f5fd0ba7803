"""Inputs dynamic mode builds from what the body shows, end to end with real TensorFlow
children: a model the module's own builder makes for a ``model`` parameter nothing passes,
variables for a list the body ``.assign``\\ s through, a batch for a callback mapped after
``.batch()``, one example for a parameter the body gives a batch axis (shaped by the model
its object holds), and a stale attribute of the function's own object staged with values
until an eager run notices one."""

from __future__ import annotations

import sys

import pytest

from tests.cli_support import dynamic_findings, finding_at

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process isolation")

HELPERS = """
import keras
import numpy as np
import tensorflow as tf

UPDATES = 0


def make_scorer(width=6):
    inputs = keras.Input((width,))
    outputs = keras.layers.Dense(2)(inputs)
    return keras.Model(inputs, outputs)


@tf.function
def score_batch(model, features):
    seen = tf.Variable(0.0)  # a new variable per trace
    seen.assign_add(1.0)
    return tf.reduce_sum(model(features)) + seen


@tf.function
def polyak(targets, sources, tau=0.5):
    global UPDATES
    UPDATES += 1  # trace-time only
    for t, s in zip(targets, sources):
        t.assign(tau * t + (1.0 - tau) * s)
    return tf.constant(0)


def jitter(images, labels):
    noise = np.random.normal()  # frozen
    order = tf.random.shuffle(tf.range(tf.shape(images)[0]))
    return images + noise, tf.gather(labels, order)


def pipeline(ds):
    ds = ds.batch(4)
    ds = ds.map(jitter)
    return ds
"""

POLICY = """
import keras
import tensorflow as tf


class Policy:
    def __init__(self, actions=3):
        self.net = keras.Sequential([keras.Input((5,)), keras.layers.Dense(actions)])
        self.bound = 1.0

    def relax(self):
        self.bound = self.bound * 0.5

    @tf.function
    def clipped(self, observation):
        scores = self.net(tf.expand_dims(observation, 0))[0]
        if self.bound < 0.5:  # stale
            scores = tf.clip_by_value(scores, -self.bound, self.bound)
        return scores


def rollout(policy, observations):
    picked = []
    for observation in observations:
        picked.append(policy.clipped(observation))
        policy.relax()
    return picked
"""

MODULES = {"helpers.py": HELPERS, "policy.py": POLICY}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], dict]:
    pytest.importorskip("tensorflow")
    return dynamic_findings(tmp_path_factory.mktemp("inputs"), MODULES)


def _at(run: dict, module: str, text: str) -> dict:
    return finding_at(run, MODULES, module, text)


def test_a_model_parameter_gets_the_model_the_modules_builder_makes(run: dict) -> None:
    found = _at(run, "helpers.py", "seen = tf.Variable(0.0)")
    assert found["code"] == "TFG205"
    assert found["status"] == "confirmed", found
    # The features are shaped for that model's input.
    assert "make_scorer(), float32[2,6]" in found["evidence"]


def test_a_list_the_body_assigns_through_is_passed_as_variables(run: dict) -> None:
    found = _at(run, "helpers.py", "UPDATES += 1")
    assert found["status"] == "confirmed", found
    assert "never over 3 calls after it" in found["evidence"]
    assert "[Variable float32[2,3], Variable float32[3]]" in found["evidence"]


def test_a_callback_mapped_after_batch_gets_a_batch(run: dict) -> None:
    found = _at(run, "helpers.py", "np.random.normal()")
    assert found["status"] == "confirmed", found
    assert "float32[2,4,4,3], int32[2]" in found["evidence"]


def test_a_stale_attribute_is_staged_on_the_object_until_an_eager_run_notices(run: dict) -> None:
    found = _at(run, "policy.py", "if self.bound < 0.5")
    assert found["code"] == "TFG109"
    assert found["status"] == "confirmed", found
    # 3.0 changes nothing in either run; 0.0 changes the eager one only.
    assert "dynamic mode set self.bound = 0.0 (was 1.0)" in found["evidence"]
    assert "the graph kept the trace-time value" in found["evidence"]
    # One observation (the body adds the batch axis), shaped for the model the object holds.
    assert "guessed inputs float32[5]" in found["evidence"]
