"""TFG303: tf.functions called with Python values that change on every call."""

import itertools

import keras
import tensorflow as tf
import tensorflow as tf2
import tf_keras
from tensorflow import function
from tensorflow import keras as tfk
from tqdm import tqdm, trange


@tf.function
def train_step(x, epoch):
    return tf.reduce_sum(tf.square(x)) * 2.0


@tf2.function(reduce_retracing=True)
def relaxed_step(x, lr):
    return tf2.reduce_sum(x) * lr


@function
def bare_step(x, tag):
    return tf.reduce_mean(x)


@tf.compat.v2.function(jit_compile=True)
def compat_step(x, step):
    return tf.reduce_max(x)


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int64)])
def signed_step(x, epoch):
    return tf.reduce_sum(x) * tf.cast(epoch, tf.float32)


@tf.function
def flagged_step(x, training=False):
    return tf.reduce_sum(x)


def plain(x, epoch):  # not a tf.function
    return x


eval_step = tf.function(lambda x, k: tf.reduce_sum(x))
x = tf.ones([4])
ds = tf.data.Dataset.from_tensor_slices(tf.zeros([8, 4])).batch(2)

# Counters of Python loops, and values computed from them.
for epoch in range(10):
    train_step(x, epoch)  # TFG303
    train_step(x, epoch=epoch)  # TFG303
    train_step(x, epoch + 1)  # TFG303
    relaxed_step(x, 0.1 * 0.9**epoch)  # TFG303
    bare_step(x, f"epoch-{epoch}")  # TFG303
    bare_step(x, str(epoch))  # TFG303
    compat_step(x, float(epoch))  # TFG303
    eval_step(x, [epoch, 2])  # TFG303
    eval_step(x, (x, epoch))  # TFG303
    eval_step(x, {"epoch": -epoch})  # TFG303
    lr = 1e-3 * (epoch // 2)
    relaxed_step(x, lr)  # TFG303
    # Near misses: tensors, signatures, constants, flags, plain functions.
    train_step(x, tf.constant(epoch))
    train_step(x, tf.cast(epoch, tf.int64))
    signed_step(x, epoch)
    flagged_step(x, training=True)
    flagged_step(x, True)
    train_step(x, 3)
    bare_step(x, "train")
    plain(x, epoch)
    train_step(x, epoch > 5)
    train_step(x, len(ds))

for step, batch in enumerate(ds):
    train_step(batch, step)  # TFG303
    train_step(batch, 1)
    train_step(step, batch)  # TFG303

for batch in ds:
    train_step(batch, 1)  # dataset elements are tensors

for i, (a, b) in enumerate(zip(range(3), range(3))):
    train_step(x, a)  # TFG303

for k, batch in zip(itertools.count(), ds):
    train_step(batch, k)  # TFG303

for epoch in tqdm(range(3)):
    train_step(x, epoch)  # TFG303

for epoch in trange(3):
    train_step(x, epoch)  # TFG303

for epoch in reversed(range(3)):
    train_step(x, epoch)  # TFG303

outs = [train_step(x, i) for i in range(3)]  # TFG303

# A counter advanced in the loop.
global_step = 0
while global_step < 100:
    train_step(x, global_step)  # TFG303
    global_step += 1
train_step(x, global_step)  # after the loop: called once

seen = 0
for batch in ds:
    train_step(batch, seen)  # TFG303
    seen = seen + 1

# Near misses: a loop over chosen values (a few traces, by design), names of unknown
# provenance, names rebound to tensors, tf.range counters (tensors).
for mode in ["train", "eval"]:
    bare_step(x, mode)
for training in (True, False):
    train_step(x, training)
for repeat in (1, 1):
    train_step(x, repeat)  # one value twice: one trace
for rate_t in tf.constant([1e-3, 1e-4]):
    train_step(x, rate_t)

# A sweep over literal numbers: one trace per value.
for temperature in (0.5, 1.0, 2.0):
    train_step(x, temperature)  # TFG303
for k in [1, 5, -10]:
    bare_step(x, k)  # TFG303
for rate in learning_rates():
    relaxed_step(x, rate)
for i in range(3):
    i = tf.constant(i)
    train_step(x, i)
for i in tf.range(3):
    train_step(x, i)
for i in range(3):
    j = 1.0
    train_step(x, j)


def learning_rates():
    return [0.1, 0.01]


def fit(n, start):
    for epoch in range(start, n):
        train_step(x, epoch)  # TFG303
        train_step(x, start)  # a parameter: unknown, maybe a tensor
    for epoch in range(n):
        pass
    train_step(x, epoch)


@tf.function
def outer(x):
    for i in range(3):
        train_step(x, i)  # traced code: retraces only while outer() traces
    return x


def shadowed():
    range = tf.range  # noqa: A001
    for i in range(3):
        train_step(x, i)


class Logger(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.log_fn = tf.function(lambda v, e: tf.reduce_sum(v))

    def on_epoch_end(self, epoch, logs=None):
        self.log_fn(x, epoch)  # TFG303
        train_step(x, epoch=epoch)  # TFG303

    def on_train_batch_end(self, batch, logs=None):
        train_step(x, batch)  # TFG303

    def on_train_begin(self, logs=None):
        train_step(x, 0)


class TfKerasLogger(tfk.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        train_step(x, epoch)  # TFG303


class LegacyLogger(tf_keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        train_step(x, epoch)  # TFG303


class NotACallback:
    def on_epoch_end(self, epoch, logs=None):
        train_step(x, epoch)  # not a Keras callback: epoch is unknown


class Trainer:
    def __init__(self):
        self.compiled = tf.function(self._step)
        self.signed = tf.function(
            self._step, input_signature=[tf.TensorSpec([None]), tf.TensorSpec([], tf.int32)]
        )

    @tf.function
    def step(self, v, epoch):
        return tf.reduce_sum(tf.square(v)) * 2.0

    def _step(self, v, epoch):
        return tf.reduce_sum(tf.square(v)) * 3.0

    def fit(self, epochs):
        for epoch in range(epochs):
            self.step(x, epoch)  # TFG303
            self.compiled(x, epoch)  # TFG303
            self.signed(x, epoch)
            self.step(x, tf.constant(epoch))

RATES = (1e-3, 3e-4, 1e-4)
MODES = ("train", "eval")
for base_rate in RATES:
    relaxed_step(x, base_rate)  # TFG303
for mode in MODES:
    bare_step(x, mode)

WIDTH, DEPTH = 32, 128
for sweep_lr, sweep_smoothing in itertools.product(RATES, (0.0, 0.1)):
    relaxed_step(x, sweep_lr)  # TFG303
    bare_step(x, sweep_smoothing)  # TFG303
for sweep_mode, sweep_n in itertools.product(MODES, range(1)):
    bare_step(x, sweep_mode)
for width in (16, WIDTH, DEPTH):
    train_step(x, width)  # TFG303
