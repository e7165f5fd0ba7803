"""TFG204 cases: NumPy functions on symbolic tensors, every import spelling, and the NumPy
uses that are fine in traced code (Python values, static shapes, dtypes, escape hatches)."""
import numpy
import numpy as np
import numpy.linalg as la
import tensorflow as tf
from numpy import asarray
from numpy import mean as np_mean
from tensorflow import keras

EAGER_TABLE = tf.constant([1.0, 2.0])  # captured eager tensor: NumPy can convert it
STEP = tf.Variable(0.0)


@tf.function
def spellings(x):
    a = np.array(x)  # TFG204
    b = numpy.sum(x)  # TFG204
    c = asarray(x)  # TFG204
    d = np_mean(x)  # TFG204
    e = la.norm(x)  # TFG204
    f = np.float32(x)  # TFG204
    return a, b, c, d, e, f


@tf.function
def derived(x):
    y = tf.nn.relu(x) * 2.0
    stats = np.mean(  # TFG204
        y,
        axis=0,
    )
    both = np.concatenate([x, y])  # TFG204
    v = np.asarray(STEP)  # TFG204
    z = np.max(tf.reduce_sum(y, axis=1))  # TFG204
    return stats, both, v, z


@tf.function
def fine(x):
    half = np.float32(0.5)  # a NumPy scalar constant
    rows = np.stack(x)  # iterates the tensor (another error, TFG203's concern)
    angle = x * np.pi
    idx = np.arange(3)
    n = np.prod(x.shape[1:])  # static shape
    rank = np.ndim(x)  # reads the static shape: works on a symbolic tensor
    shape = np.shape(x)
    cast = tf.cast(x, np.float32)  # a dtype argument, not a call on the tensor
    same = x.dtype == np.float32
    table = np.array(EAGER_TABLE)  # captured eager tensor
    noise = np.random.normal(size=3)  # TFG103
    return half * angle, idx, n, rank, shape, cast, same, table, noise


@tf.function
def escape_hatches(x):
    y = tf.numpy_function(lambda v: np.mean(v).astype(np.float32), [x], tf.float32)
    z = tf.py_function(np_helper, [x], tf.float32)
    if tf.executing_eagerly():
        tf.print(np.mean(x))
    return y + z


def np_helper(v):
    return np.float32(np.mean(v))  # runs eagerly inside tf.py_function


def python_helper(values):
    return np.mean(values)  # called with a Python list below: fine


@tf.function
def calls_helper(x):
    return x * python_helper([1.0, 2.0])


def eager_stats(x):
    return np.mean(x)  # eager code


class Block(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],))

    def call(self, inputs):
        weights = np.array(self.w)  # TFG204
        return inputs * np.sum(inputs)  # TFG204


def shadowed(x):
    np = tf.experimental.numpy  # the TensorFlow NumPy API: converts nothing

    @tf.function
    def inner(y):
        return np.mean(y)

    return inner(x)


ds = tf.data.Dataset.from_tensor_slices([[1.0, 2.0]]).map(lambda row: np.sum(row))  # TFG204
