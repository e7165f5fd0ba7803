"""TFG201 cases: bool(), assert and comprehension conditions (never converted), every import
spelling, shadowing, Python values and escape hatches."""

import tensorflow as tf2
from tensorflow import function
from tensorflow import keras
from keras import ops


@tf2.function
def explicit_bool(x):
    y = tf2.reduce_sum(x)
    if bool(y > 0):  # TFG201
        y = y - 1
    flag = bool(  # TFG201
        tf2.reduce_any(x > 0)
    )
    return y, flag


@function
def from_import(x):
    return bool(tf2.math.is_nan(tf2.reduce_sum(x)))  # TFG201


@tf2.compat.v2.function(jit_compile=True)
def compat_spelling(x):
    assert tf2.reduce_all(x > 0)  # TFG201
    assert tf2.reduce_all(x > 0) and x.shape[0] == 2, "positive"  # TFG201
    assert x.shape[0] == 2  # static shape: fine
    assert isinstance(x, tf2.Tensor)
    return x


@tf2.function
def comprehension_conditions(x):
    total = tf2.reduce_sum(x)
    picked = [i for i in range(3) if total > i]  # TFG201
    both = [i for i in range(3) if total > i and i > 0]  # TFG201
    negated = {i for i in range(3) if not tf2.equal(total, i)}  # TFG201
    fine = [i for i in range(3) if i > 1]  # Python ints
    ternary = [1.0 if total > i else 0.0 for i in range(2)]  # converted by AutoGraph
    return picked, both, negated, fine, ternary


@tf2.function
def converted_control_flow(x, training=False):
    # AutoGraph converts all of these into tf.cond / tf.while_loop / tf.logical_*.
    y = tf2.reduce_sum(x)
    if y > 0:
        y = y - 1
    elif not y < -5:
        y = y + 1
    while y > 10 and y < 100:
        y = y / 2
    z = 1.0 if y > 0 else 0.0
    w = 0 < y < 5
    if training and x.shape[0] > 1:
        z = z * 2
    if x is None or y is not None:
        z = z + 1
    return y, z, w, tf2.cond(y > 0, lambda: y, lambda: -y)


@tf2.function
def python_values(x, items=()):
    n = x.shape[0]
    ok = bool(n)  # a static dimension
    ok = bool(items) and ok  # a Python default
    ok = bool(len(items))
    ok = bool(tf2.executing_eagerly())
    ok = bool(x.shape.rank)
    return ok


@tf2.function
def bare_parameter(x, use_bias):
    # A bare parameter may be a Python bool (step(x, True)): unknown, so silent.
    if bool(use_bias):
        return x
    return x * 2


@tf2.function
def shadowed(x):
    bool = tf2.cast  # noqa: A001 - not the builtin
    return bool(x > 0, tf2.float32)


@tf2.function
def with_escape(x):
    return tf2.py_function(lambda v: bool(tf2.reduce_sum(v) > 0), [x], tf2.bool)


@tf2.function
def eager_guard(x):
    if tf2.executing_eagerly():
        return bool(tf2.reduce_sum(x) > 0)  # never traced in a graph
    return x


def helper(t):
    return bool(tf2.reduce_max(t) > 1)  # TFG201


@tf2.function
def calls_helper(x):
    return helper(x)


class Gate(keras.layers.Layer):
    def call(self, inputs):
        scores = ops.sum(inputs)
        if bool(scores > 0):  # TFG201
            return inputs
        keep = [j for j in range(2) if ops.max(inputs) > j]  # TFG201
        return inputs, keep


def parse(example):
    value = tf2.strings.to_number(example)
    return bool(value > 0)  # TFG201


ds = tf2.data.Dataset.from_tensor_slices(["1", "2"]).map(parse)


def eager(x):
    return bool(tf2.reduce_sum(x) > 0)  # eager code: fine
