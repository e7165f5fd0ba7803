"""Probes for every entry point, the cheap checks (TFG303/305/402/403) and the contexts
dynamic mode could not reach before (named lambdas, static methods, reducers), end to end
with real TensorFlow children: one project of three small modules, one run."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tests.cli_support import dynamic_findings, finding_at

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process isolation")

PROBES = """
import datetime
import os
import pathlib
import random
import secrets
import shutil
import time
import uuid
from datetime import date

import numpy as np
import tensorflow as tf

RNG = np.random.default_rng(0)


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def draws(x):
    a = random.vonmisesvariate(0.0, 1.0)  # TFG103
    b = np.random.zipf(2.0)  # TFG103
    c = RNG.uniform()  # TFG103
    d = secrets.randbelow(10)  # TFG103
    e = uuid.uuid4()  # TFG103
    return x + a + b + c + d + len(str(e))


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def clocks(x):
    now = datetime.datetime.now()  # TFG104
    day = date.today()  # TFG104
    home = os.environ.get("HOME", "")  # TFG104
    fixed = time.strftime("%Y", time.gmtime(0))  # TFG104
    same = isinstance(datetime.datetime(2020, 1, 1), datetime.datetime)
    return x + now.year + day.year + len(home) + len(fixed) + same


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def files(x):
    with open("trace.log", "w") as fh:  # TFG108
        fh.write("traced")  # TFG108
    pathlib.Path("note.txt").write_text("traced")  # TFG108
    os.makedirs("out", exist_ok=True)  # TFG108
    shutil.rmtree("out")  # TFG108
    name = input("name? ")  # TFG108
    return x + len(name)
"""

CHEAP = """
import time

import tensorflow as tf

STEPS = 150


@tf.function
def step(x, epoch):
    return x * 2.0


@tf.function
def bench(x):
    return tf.reduce_sum(x * 2.0)


@tf.function
def unrolled(x):
    for i in range(STEPS):  # TFG305
        x = x + 1.0
    return x


def histogram(image):
    bins = []
    for b in range(120):  # TFG305
        bins.append(tf.reduce_mean(image - float(b)))
    return tf.stack(bins)


hist = tf.data.Dataset.from_tensor_slices(tf.ones([2, 3])).map(histogram)


class Trainer:
    @tf.function
    def step(self, x, epoch):
        return x * 2.0

    def fit(self, x):
        for epoch in range(5):
            self.step(x, epoch)  # TFG303


def train():
    x = tf.ones([2])
    for epoch in range(10):
        step(x, epoch)  # TFG303
    for e in range(3):
        step(x, e)  # TFG303
    start = time.perf_counter()
    for _ in range(100):
        bench(x)  # TFG403
    return time.perf_counter() - start
"""

# Its own module: with functions run eagerly nothing else of the module traces.
EAGER = """
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def noisy(x):
    print("noisy")  # TFG101
    return x * 2.0


tf.config.run_functions_eagerly(True)  # TFG402

if __name__ == "__main__":
    tf.config.run_functions_eagerly(True)  # TFG402
"""

SWITCHED_BACK = """
import tensorflow as tf

tf.config.run_functions_eagerly(True)  # TFG402
tf.config.run_functions_eagerly(False)
"""

CONTEXTS = """
import random

import keras
import tensorflow as tf

scale = lambda x: x * random.random()  # TFG103
step = tf.function(lambda x: x - random.random())  # TFG103
scaled = tf.function(scale)
ds = tf.data.Dataset.range(4).map(lambda i: tf.cast(i, tf.float32))


def reducer(state, element):
    print("reducing")  # TFG101
    return state + element


total = ds.reduce(tf.constant(0.0), reducer)


class Ops:
    def __init__(self, factor):
        self.factor = factor

    @staticmethod
    @tf.function
    def double(x):
        print("double")  # TFG101
        return x * 2.0


class Plain(keras.layers.Layer):
    def call(self, inputs):
        print("plain call")  # TFG101
        return inputs * 2.0
"""

HANDLERS = """
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def checked_mean(x):
    try:
        tf.debugging.assert_all_finite(x, "bad input")
        m = tf.reduce_mean(x)
    except tf.errors.InvalidArgumentError:  # TFG206
        m = tf.constant(0.0)
    return m


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def as_ints(x):
    try:
        y = tf.cast(x, tf.int32)
    except Exception:  # TFG206
        y = tf.zeros_like(x, tf.int32)
    return y


def _positive(v):
    if (v.numpy() < 0).any():
        raise ValueError("negative")
    return v


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def checked(x):
    try:
        y = tf.py_function(_positive, [x], tf.float32)
    except tf.errors.InvalidArgumentError as bad:  # TFG206
        y = tf.zeros_like(x)
    return y


@tf.function(input_signature=[tf.TensorSpec([4, 3], tf.float32)])
def per_row(x):
    try:
        n = tf.gather(tf.shape(x), 0)
        y = x / tf.cast(n, tf.float32)
    except tf.errors.InvalidArgumentError as err2:  # TFG206
        y = x
    return y


@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
def known_shape(x):
    try:
        tf.debugging.assert_equal(x.shape[0], 3)
        n = tf.reduce_sum(x)
    except tf.errors.InvalidArgumentError as err:  # TFG206
        n = tf.constant(-1.0)
    return n
"""

MODULES = {
    "probes.py": PROBES,
    "cheap.py": CHEAP,
    "eager.py": EAGER,
    "switched.py": SWITCHED_BACK,
    "contexts.py": CONTEXTS,
    "handlers.py": HANDLERS,
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], dict]:
    pytest.importorskip("tensorflow")
    return dynamic_findings(tmp_path_factory.mktemp("checks"), MODULES)


def _at(run: dict, module: str, text: str) -> dict:
    return finding_at(run, MODULES, module, text)


@pytest.mark.parametrize(
    ("text", "probe"),
    [
        ("random.vonmisesvariate", "random.vonmisesvariate"),
        ("np.random.zipf", "numpy.random.zipf"),
        ("RNG.uniform", "numpy.random.Generator.uniform"),
        ("secrets.randbelow", "secrets.randbelow"),
        ("uuid.uuid4", "uuid.uuid4"),
        ("datetime.datetime.now", "datetime.datetime.now"),
        ("date.today", "datetime.date.today"),
        ('os.environ.get("HOME"', "os.environ"),
        ('open("trace.log"', "open"),
        ('fh.write("traced")', "file.write"),
        ("write_text", "Path.write_text"),
        ("os.makedirs", "os.makedirs"),
        ("shutil.rmtree", "shutil.rmtree"),
        ("input(", "input"),
    ],
)
def test_every_entry_point_is_probed_at_its_line(run: dict, text: str, probe: str) -> None:
    found = _at(run, "probes.py", text)
    assert found["status"] == "confirmed", found
    assert found["evidence"].startswith(f"{probe} ran 1 time while tracing"), found


def test_a_formatted_fixed_time_reads_no_clock(run: dict) -> None:
    # strftime/gmtime given a time are flagged statically but read no clock: no hit.
    found = _at(run, "probes.py", "time.strftime")
    assert found["status"] == "unverified"
    assert "no clock call was seen" in found["evidence"]


def test_retracing_per_python_value_is_staged_and_counted(run: dict) -> None:
    found = _at(run, "cheap.py", " step(x, epoch)  #")
    assert found["status"] == "confirmed", found
    assert (
        "staged: called a fresh copy of step() with epoch=1, then epoch=2, then epoch=1 again"
        in found["evidence"]
    )
    assert "tracing count 1 -> 2, one new graph per new value" in found["evidence"]


def test_each_retracing_call_of_one_function_is_staged_on_its_own_copy(run: dict) -> None:
    # The same values staged for the first call must not already be cached for the second.
    found = _at(run, "cheap.py", " step(x, e)  #")
    assert found["status"] == "confirmed", found
    line = next(
        i
        for i, text in enumerate(textwrap.dedent(CHEAP).splitlines(), start=1)
        if " step(x, e)  #" in text
    )
    assert "staged: called a fresh copy of step() with epoch=1, then epoch=2" in found["evidence"]
    assert f"as the call at line {line} passes" in found["evidence"]
    assert "tracing count 1 -> 2, one new graph per new value" in found["evidence"]


def test_retracing_of_a_method_is_staged_on_an_instance(run: dict) -> None:
    found = _at(run, "cheap.py", "self.step(x, epoch)  #")
    assert found["status"] == "confirmed", found
    assert (
        "staged: called a fresh copy of Trainer.step() with epoch=1, then epoch=2"
        in found["evidence"]
    )


def test_a_timed_first_call_is_compared_with_a_warm_one(run: dict) -> None:
    found = _at(run, "cheap.py", "bench(x)  #")
    assert found["status"] == "confirmed", found
    assert "staged: a fresh copy of bench() took" in found["evidence"]
    assert "tracing count 0 -> 1" in found["evidence"]


def test_an_unrolled_loop_shows_in_the_graph_and_scales_with_its_global(run: dict) -> None:
    found = _at(run, "cheap.py", "for i in range(STEPS)")
    assert found["status"] == "confirmed", found
    assert "300 of them created by the loop" in found["evidence"]  # 2 ops per iteration
    assert "staged: with STEPS = 15 instead of 150, " in found["evidence"]
    assert "(30 from the loop)" in found["evidence"]


def test_a_dataset_callbacks_unrolled_loop_is_measured_too(run: dict) -> None:
    found = _at(run, "cheap.py", "for b in range(120)")
    assert found["status"] == "confirmed", found
    assert "(120 iterations)" in found["evidence"]


def test_eager_switch_at_import_is_confirmed_and_guarded_ones_are_not_run(run: dict) -> None:
    found = _at(run, "eager.py", "tf.config.run_functions_eagerly(True)  # TFG402")
    assert found["status"] == "confirmed", found
    assert "functions_run_eagerly() is True after the import" in found["evidence"]
    guarded = run[("eager.py", len(textwrap.dedent(EAGER).splitlines()))]
    assert guarded["status"] == "unverified"
    assert "__main__" in guarded["evidence"]


def test_a_module_that_switches_graphs_off_is_still_checked_with_graphs(run: dict) -> None:
    # The import turned run_functions_eagerly on: left so, every experiment would run
    # eagerly and see the print on every call, the opposite of what tracing does.
    found = _at(run, "eager.py", 'print("noisy")')
    assert found["status"] == "confirmed", found


def test_eager_switch_turned_off_again_is_not_reproduced(run: dict) -> None:
    found = _at(run, "switched.py", "(True)")
    assert found["status"] == "not-reproduced", found
    assert "is False after the import" in found["evidence"]


@pytest.mark.parametrize(
    "text",
    [
        "scale = lambda",
        "step = tf.function(lambda",
        'print("reducing")',
        'print("double")',
        'print("plain call")',
    ],
)
def test_named_lambdas_static_methods_reducers_and_plain_calls_are_reached(
    run: dict, text: str
) -> None:
    found = _at(run, "contexts.py", text)
    assert found["status"] == "confirmed", found


def test_a_handler_bypassed_by_tracing_is_confirmed(run: dict) -> None:
    found = _at(run, "handlers.py", "InvalidArgumentError:  # TFG206")
    assert found["status"] == "confirmed", found
    assert "ran while tracing" in found["evidence"]
    assert "put CheckNumerics (line " in found["evidence"]
    assert "the handler never ran" in found["evidence"]


def test_a_handler_around_ops_that_cannot_fail_at_run_time_is_not_confirmed(run: dict) -> None:
    found = _at(run, "handlers.py", "except Exception:  # TFG206")
    assert found["status"] == "unverified", found
    assert "none of its graph ops (Cast) is one known to raise" in found["evidence"]


def test_a_handler_that_caught_a_trace_time_error_is_not_confirmed(run: dict) -> None:
    # Static sizes make assert_equal fail while tracing: the handler runs then.
    found = _at(run, "handlers.py", "InvalidArgumentError as err:  # TFG206")
    assert found["status"] == "unverified", found
    assert "caught an error raised while tracing" in found["evidence"]


def test_a_python_function_that_raises_at_run_time_is_such_an_op(run: dict) -> None:
    found = _at(run, "handlers.py", "InvalidArgumentError as bad:  # TFG206")
    assert found["status"] == "confirmed", found
    assert "put EagerPyFunc (line " in found["evidence"]


def test_a_lookup_on_static_values_cannot_fail_at_run_time(run: dict) -> None:
    # tf.gather of a fully known shape: its inputs are known while tracing.
    found = _at(run, "handlers.py", "InvalidArgumentError as err2:  # TFG206")
    assert found["status"] == "unverified", found
    assert "GatherV2 on static values" in found["evidence"]
