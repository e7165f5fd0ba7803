"""TFG205 cases: tf.Variable created per trace, and the lazy-creation idioms that are fine."""
import tensorflow as tf
import tensorflow as tf2
from tensorflow import Variable
from tensorflow import keras

import keras as k3

counter = tf.Variable(0)  # module level: created once
_cache = {}
_lazy = None


@tf.function
def plain(x):
    v = tf.Variable(1.0)  # TFG205
    w = tf2.Variable(tf.zeros_like(x))  # TFG205
    u = Variable(2.0)  # TFG205
    c = tf.compat.v1.Variable(3.0)  # TFG205
    k = k3.Variable(1.0)  # TFG205
    counter.assign_add(1)
    return v * x + w + u + c + k


@tf.function
def inline(x):
    return x * tf.Variable(2.0)  # TFG205


@tf.function
def local_guard(x, v=None):
    w = None
    if w is None:
        w = tf.Variable(1.0)  # TFG205
    if v is None:
        v = tf.Variable(1.0)  # TFG205
    return w * v * x


@tf.function
def unrelated_guard(x, training=True):
    if training:
        noise = tf.Variable(tf.zeros_like(x))  # TFG205
        x = x + noise
    if x.shape[0] > 2:
        x = x * tf.Variable(1.0)  # TFG205
    return x


@tf.function
def global_guard(x):
    global _lazy
    if _lazy is None:
        _lazy = tf.Variable(1.0)  # TFG105
    return _lazy * x


@tf.function
def cache_guard(x):
    if "scale" not in _cache:
        _cache["scale"] = tf.Variable(1.0)  # TFG102
    return _cache["scale"] * x


@tf.function
def eager_only(x):
    if tf.executing_eagerly():
        debug = tf.Variable(x)
        x = x + debug
    return x


@tf.function
def lifted(x):
    with tf.init_scope():
        w = tf.Variable(1.0)
    return w * x


def make_weight():
    return tf.Variable(1.0)  # TFG205


@tf.function
def uses_helper(x):
    return make_weight() * x


def make_guarded_weight():
    return tf.Variable(1.0)


class Guarded(tf.Module):
    def __init__(self):
        self.w = None
        self.vs = []
        self.cell = None

    @tf.function
    def __call__(self, x):
        if self.w is None:
            self.w = make_guarded_weight()
        if not self.vs:
            self.vs.append(tf.Variable(1.0))  # TFG102
        if self.cell is None:
            v = tf.Variable(2.0)
            self.cell = v
        self.b = self.b if hasattr(self, "b") else tf.Variable(0.0)  # TFG106
        return self.w * x * self.vs[0] * self.cell + self.b


class Unguarded(tf.Module):
    @tf.function
    def __call__(self, x):
        self.w = tf.Variable(1.0)  # TFG205
        return self.w * x


class Layer(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.scale = tf.Variable(1.0)

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], 2))

    def call(self, x):
        bias = self.add_weight(shape=(2,), initializer="zeros")  # TFG205
        if not self.built:
            extra = self.add_weight(shape=())
            x = x * extra
        if not hasattr(self, "gain"):
            self.gain = self.add_weight(shape=(), initializer="ones")
        return tf.matmul(x, self.kernel) * self.scale * self.gain + bias


class Model(keras.Model):
    def train_step(self, data):
        step = tf.Variable(0)  # TFG205
        return {"step": step}


def eager(x):
    v = tf.Variable(x)  # not traced
    return v


def escape(x):
    def body(t):
        return tf.Variable(t).read_value()  # runs eagerly inside py_function

    return tf.py_function(body, [x], tf.float32)


ds = tf.data.Dataset.range(3).map(lambda i: tf.Variable(1) + i)  # TFG205


@tf.function
def shadowed(x, Variable=None):
    return Variable(x)  # a parameter, not tf.Variable


class Other:
    def add_weight(self, **kw):
        return 1.0


@tf.function
def not_self(x, obj):
    return obj.add_weight(shape=()) * x


class Registry(tf.Module):
    def add_weight(self, shape):
        return tf.zeros(shape)

    @tf.function
    def __call__(self, x):
        return x + self.add_weight(())  # not a Keras layer: its own method


class LazyHelper(tf.Module):
    def __init__(self):
        self.v = None

    def _create(self, x):
        self.v = tf.Variable(tf.zeros_like(x))

    def _fresh(self):
        return tf.Variable(0.0)  # TFG205

    @tf.function
    def __call__(self, x):
        if self.v is None:
            self._create(x)
        return self.v + x + self._fresh()
