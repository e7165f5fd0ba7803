"""TFG209 cases: TensorArray writes whose result is thrown away in traced code."""
import tensorflow as tf
from tensorflow import TensorArray

import tensorflow as tf2


@tf.function
def discarded(x, n):
    ta = tf.TensorArray(tf.float32, size=n)
    other = TensorArray(tf.float32, size=n)
    third = tf2.TensorArray(tf.float32, size=n, dynamic_size=True)
    for i in tf.range(n):
        ta.write(i, x[i])  # TFG209
        other.scatter([i], [x[i]])  # TFG209
    third.unstack(x)  # TFG209
    third.split(x, [1, 2])  # TFG209
    return ta.stack(), other.stack(), third.stack()


@tf.function
def kept(x, n):
    ta = tf.TensorArray(tf.float32, size=n)
    for i in tf.range(n):
        ta = ta.write(i, x[i])
    ta.write(0, x[0])  # TFG209
    out = ta.write(1, x[1])
    return out.stack(), ta.stack()


@tf.function
def chained(x):
    ta = tf.TensorArray(tf.float32, size=2).write(0, x[0])
    ta.write(1, x[1])  # TFG209
    tf.TensorArray(tf.float32, size=1).write(0, x[0])  # TFG209
    return ta.stack()


def annotated(ta: tf.TensorArray, values):
    ta.unstack(values)  # TFG209
    return ta


def helper_kept(ta: tf.TensorArray, i, v):
    return ta.write(i, v)


@tf.function
def uses_helpers(x):
    ta = tf.TensorArray(tf.float32, size=3)
    ta = annotated(ta, x)
    ta = helper_kept(ta, 0, x[0])
    return ta.stack()


class Accumulator(tf.Module):
    def __init__(self):
        self.ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

    @tf.function
    def __call__(self, x):
        self.ta.write(0, x)  # TFG209
        return x


def eager_fill(values):
    ta = tf.TensorArray(tf.float32, size=len(values))
    for i, v in enumerate(values):
        ta.write(i, v)  # eager: updated in place
    return ta.stack()


@tf.function
def not_tensor_arrays(line, writer, f):
    words = "a b".split(" ")
    parts = tf.strings.split(line)
    writer.write("x")  # an unknown object
    f.write(b"data")
    return parts, words


def escape(x):
    def body(t):
        ta = tf.TensorArray(tf.float32, size=1)
        ta.write(0, t)
        return ta.stack()

    return tf.py_function(body, [x], tf.float32)


ds = tf.data.Dataset.range(3).map(
    lambda i: annotated(tf.TensorArray(tf.int64, size=1), [i]).stack()
)
