"""TFG203 cases where AutoGraph is off: int(), float(), len(), range() and `for` loops on
tensors are Python again; with AutoGraph on they are converted and fine."""

import tensorflow as tf
from tensorflow.autograph.experimental import do_not_convert


@tf.function(autograph=False)
def no_autograph(x: tf.Tensor):
    y = tf.reshape(x, [-1])
    n = len(y)  # TFG203
    m = int(tf.reduce_sum(y))  # TFG203
    z = float(tf.reduce_max(y))  # TFG203
    s = sorted(y)  # TFG203
    total = tf.zeros([])
    for v in y:  # TFG203
        total += v
    for k in range(tf.size(y)):  # TFG203
        total += 1.0
    for i, v in enumerate(y):  # TFG203
        total += v
    return n, m, z, s, total


@tf.function(autograph=False)
def no_autograph_fine(x, n=3):
    y = tf.reshape(x, [-1])
    size = y.shape[0]
    for i in range(n):  # Python ints
        y = y * 2
    for part in tf.unstack(tf.reshape(y, [n, -1])):  # a Python list of tensors
        y = y + tf.reduce_sum(part)
    total = int(size) + len([1, 2]) + float(n)
    return tf.cast(y, tf.float32), total


@tf.function(autograph=False)
def bare_parameter(x, steps):
    for _ in range(steps):  # a bare parameter: step(x, 3) passes a Python int
        x = x * 2
    return x, int(steps)


@do_not_convert
def not_converted(t):
    return len(tf.shape(t))  # TFG203


@tf.function
def calls_not_converted(x):
    return not_converted(x)


def off_callee(t):
    table = [1.0, 2.0]
    return table[int(tf.argmax(t))]  # TFG203


@tf.function(autograph=False)
def off_root(x):
    return off_callee(x)


@tf.function(input_signature=[tf.TensorSpec([None], tf.int32)], autograph=False)
def signature(i):
    return int(i[0])  # TFG203
