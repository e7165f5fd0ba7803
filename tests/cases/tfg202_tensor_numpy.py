"""TFG202 cases: .numpy() on symbolic tensors and variables; eager escapes and captures."""
import numpy as np
import tensorflow as tf
import tensorflow as tf2
from tensorflow import function, keras

GLOBAL_TABLE = tf.constant([1.0, 2.0])  # an eager tensor: .numpy() works while tracing
GLOBAL_STEP = tf.Variable(0)


@tf.function
def param(x):
    return x.numpy()  # TFG202


@tf2.function(input_signature=[tf2.TensorSpec([None], tf2.float32)])
def op_result(x):
    y = tf2.reduce_sum(x) * 2
    z = y.numpy()  # TFG202
    return tf2.constant(3.0).numpy() + z  # TFG202


@function
def captured(x):
    table = GLOBAL_TABLE.numpy()  # captured eager tensor: fine
    step = GLOBAL_STEP.numpy()  # TFG202
    return x * table + step


@tf.function
def subscripts(pair, n=None):
    first = pair[0].numpy()  # TFG202
    return first + n.numpy()  # TFG202


@tf.function
def user_call(x):
    out = helper(x)
    a, b = tf.unstack(out)
    return out.numpy() + a.numpy()  # TFG202, TFG202


def helper(x):
    arr = x.numpy()  # TFG202
    return tf.constant(arr)


@tf.function
def eager_guards(x):
    if tf.executing_eagerly():
        tf.print(x.numpy())
    value = x.numpy() if tf.executing_eagerly() else x
    with tf.init_scope():
        fixed = tf.constant(2.0).numpy()
    if hasattr(x, "numpy"):
        value = x.numpy()
    try:
        value = x.numpy()
    except AttributeError:
        value = x
    return value * fixed


@tf.function
def early_exit(x):
    if not tf.executing_eagerly():
        return x
    return x.numpy()


@tf.function
def with_default(x, scale=GLOBAL_TABLE):
    return x * scale.numpy()  # a default eager tensor: may well work


@tf.function
def numpy_with_args(x, frame):
    return frame.numpy(force=True)  # some other API


@tf.function
def escape_hatches(x):
    y = tf.py_function(lambda v: v.numpy() * 2, [x], tf.float32)
    z = tf.numpy_function(np.square, [x], tf.float32)
    return y + z + tf.py_function(eager_numpy, [x], tf.float32)


def eager_numpy(v):
    return v.numpy() + 1.0  # runs eagerly inside tf.py_function


def eager_only(x):
    return x.numpy()  # never traced


class Counter(tf.Module):
    def __init__(self):
        self.count = tf.Variable(0)
        self.table = tf.constant([1.0])  # eager tensor made outside the trace
        self.lazy = None

    @tf.function
    def __call__(self, x):
        if self.lazy is None:
            self.lazy = tf.Variable(1.0)
        total = self.count.numpy()  # TFG202
        total += self.lazy.numpy()  # TFG202
        return x + total + self.table.numpy()


class Model(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    def call(self, inputs):
        kernel = self.dense.kernel.numpy()  # TFG202
        return self.dense(inputs) * kernel

    def train_step(self, data):
        x, y = data
        pred = self(x, training=True)
        loss = self.compute_loss(y=y, y_pred=pred)
        for v in self.trainable_variables:
            tf.print(v.numpy())  # TFG202
        step = self.optimizer.iterations.numpy()  # TFG202
        first = self.trainable_variables[0].numpy()  # TFG202
        return {"loss": loss.numpy(), "step": step, "first": first, "p": pred.numpy()}  # TFG202, TFG202


def shadowed(cache):
    @tf.function
    def inner(x):
        stored = cache.get("x")
        return stored.numpy() + x  # a stored object: may be an eager tensor

    return inner


ds = tf.data.Dataset.range(3).map(lambda v: tf.cast(v.numpy(), tf.float32))  # TFG202
