"""TFG105/TFG106 cases."""
import tensorflow as tf
from tensorflow import keras

step_count = 0
best = None
total = tf.Variable(0.0)


@tf.function
def train_step(x):
    global step_count, best
    step_count += 1  # TFG105
    best = x  # TFG105
    total.assign_add(tf.reduce_sum(x))
    return x


def eager_loop(ds):
    global step_count
    for x in ds:
        train_step(x)
        step_count += 1


class Model(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(4)
        self.calls = 0
        self.scale = None

    def train_step(self, data):
        x, y = data
        self.calls += 1  # TFG106
        self.last_loss = tf.reduce_mean(y)  # TFG106
        self.tracker.count = 0  # TFG106
        if self.scale is None:
            self.scale = tf.Variable(1.0)
        if not hasattr(self, "_cache"):
            self._cache = {}
        return {"loss": self.last_loss}

    def build(self, shape):
        self.kernel = self.add_weight(shape=shape)


class Counter(tf.Module):
    def __init__(self):
        self.n = tf.Variable(0)
        self.v = None

    @tf.function
    def __call__(self, x):
        self.n.assign_add(1)
        with tf.init_scope():
            self.created = True
        if self.v is None:
            self.v = tf.Variable(tf.zeros_like(x))
        obj = Holder()
        obj.value = x
        return x


class Holder:
    value = None


def make():
    calls = 0

    @tf.function
    def f(x):
        nonlocal calls
        calls += 1  # TFG105
        for calls in range(2):  # TFG105
            pass
        return x

    return f
