"""TFG101 cases: every import spelling, shadowing, escape hatches."""
import functools

import tensorflow as tf2
from tensorflow import function
from tensorflow import keras


@tf2.function
def a(x):
    print(x)  # TFG101
    tf2.print(x)
    return x


@function
def b(x):
    print("b", x, sep=",")  # TFG101
    return x


@tf2.compat.v2.function(jit_compile=True)
def c(x):
    print(  # TFG101
        "multi-line",
        x,
    )
    return x


@functools.partial(tf2.function, reduce_retracing=True)
def d(x):
    return helper(x)


def helper(x):
    print("helper")  # TFG101
    return x


def eager_report(x):
    print(x)  # eager code only
    return x


class Block(keras.layers.Layer):
    def call(self, x):
        print = tf2.print  # local rebinding: not the builtin
        print(x)
        return x


@tf2.function
def with_escape(x):
    y = tf2.py_function(lambda v: print(v) or v, [x], tf2.float32)
    tf2.numpy_function(eager_only, [x], tf2.float32)
    return y


def eager_only(v):
    print(v)  # only ever run by numpy_function
    return v


def not_traced_nested():
    def inner():
        print("inner")
    return inner
