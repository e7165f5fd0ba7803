"""TFG201 cases where AutoGraph is off: autograph=False, do_not_convert, and their callees."""

import tensorflow as tf
from tensorflow.autograph.experimental import do_not_convert


@tf.function(autograph=False)
def no_autograph(x: tf.Tensor, training=False):
    y = tf.reduce_sum(x)
    if y > 0:  # TFG201
        y = y - 1
    elif y < -5:  # TFG201
        y = y + 1
    while y > 10:  # TFG201
        y = y / 2
    z = 1.0 if y > 0 else 0.0  # TFG201
    ok = not tf.reduce_any(x > 0)  # TFG201
    both = (y > 0) and (y < 5)  # TFG201
    either = (y > 0) or training  # TFG201
    chained = 0 < y < 5  # TFG201
    if training and y > 0:  # TFG201
        z = z * 2
    if x:  # TFG201
        z = z + 1
    return y, z, ok, both, either, chained


@tf.function(autograph=False)
def no_autograph_python_values(x, flag, n=3, training=False):
    if training:  # a Python flag
        x = x * 2
    if flag:  # a bare parameter: may be a Python bool
        x = x + 1
    if n > 2 and x.shape[0] > 1:  # Python int and static shape
        x = x - 1
    if x is None or x == None:  # noqa: E711 - Python answers both
        return x
    while n > 0:
        n -= 1
    return tf.cond(tf.reduce_sum(x) > 0, lambda: x, lambda: -x)


@tf.function(autograph=False)
def graph_ops_only(x):
    y = tf.reduce_sum(x)
    return tf.where(y > 0, y, -y), tf.logical_and(y > 0, y < 5), tf.logical_not(y > 0)


@do_not_convert
def not_converted(t):
    if tf.reduce_max(t) > 1:  # TFG201
        return t
    return -t


@tf.function
def calls_not_converted(x):
    return not_converted(x)


@tf.autograph.experimental.do_not_convert
def not_converted_dotted(t):
    return tf.abs(t) if tf.reduce_min(t) < 0 else t  # TFG201


@tf.function
def calls_dotted(x):
    return not_converted_dotted(x)


def callee_of_off(t):
    if tf.reduce_mean(t) > 0:  # TFG201
        return t
    return -t


@tf.function(autograph=False)
def off_root(x):
    return callee_of_off(x)


@tf.function(autograph=False)
def off_guarded(x):
    if tf.executing_eagerly():
        if tf.reduce_sum(x) > 0:  # eager only: fine
            return x
    return x


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)], autograph=False)
def signature_confirms(x):
    if x.shape[0]:
        return x
    if x[0]:  # TFG201
        return x
    return -x
