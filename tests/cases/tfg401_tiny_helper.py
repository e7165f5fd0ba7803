"""TFG401 tiny-helper-decorated: tiny @tf.function helpers called from other traced code."""

import functools

import keras
import tensorflow as tf
from tensorflow import function


@tf.function
def scale(x):  # TFG401
    return x * 2.0


@tf.function(jit_compile=True)
def shift(x, y):  # TFG401
    return tf.add(x, y) - 1.0


@function
def relu(x):  # TFG401
    return keras.ops.relu(x)


@tf.function
def bump(v):  # TFG401
    v.assign_add(1.0)


@tf.function
def larger(x):
    a = tf.matmul(x, x)
    b = tf.nn.relu(a)
    return tf.reduce_sum(b)  # three ops: above tiny-helper-max-ops


@tf.function
def looped(x):
    for i in tf.range(3):
        x = x + 1.0
    return x


@tf.function
def branched(x):
    if x > 0:
        return x * 2.0
    return x


@tf.function
def with_cond(x):
    return tf.cond(x > 0, lambda: x, lambda: -x)


def plain_helper(x):
    return x + 1.0


@tf.function
def calls_module_code(x):
    return plain_helper(x) * 2.0  # unknown cost


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def with_signature(x):
    return x * 2.0  # an endpoint needs its own tf.function


@tf.function
def serving_default(x):  # TFG301
    return x * 2.0


@tf.function
@functools.lru_cache
def stacked(x):
    return x * 2.0


class Exported(tf.Module):
    @tf.function
    def double(self, x):
        return x * 2.0  # a tf.Module method may be an exported endpoint


@tf.function
def step(x, y, v):
    a = scale(x)
    b = shift(a, y)
    c = relu(b)
    bump(v)
    d = larger(c) + looped(c) + branched(c) + with_cond(c)
    e = calls_module_code(d) + with_signature(d) + serving_default(d) + stacked(d)
    return Exported().double(e)


@tf.function
def entry(x):
    return x * 3.0  # tiny, but only eager code calls it: an entry point


for value in [1.0, 2.0]:
    entry(tf.constant(value))
