"""TFG302: a tf.function made again on every iteration or call, and called there."""

import functools

import keras
import tensorflow as tf
import tensorflow as tf2
import tf_keras
from tensorflow import function
from tensorflow import keras as tfk

xla = tf.function(jit_compile=True)
xla_partial = functools.partial(tf.function, jit_compile=True)


def forward(x):
    return tf.reduce_sum(tf.square(x)) * 2.0


x = tf.ones([4])
ds = tf.data.Dataset.from_tensor_slices(tf.zeros([8, 4])).batch(2)
step = tf.function(forward)  # created once: fine
USE_XLA = False

for epoch in range(3):
    f = tf.function(forward)  # TFG302
    f(x)
    tf2.function(forward)(x)  # TFG302
    function(forward)(x)  # TFG302
    tf.compat.v2.function(forward, reduce_retracing=True)(x)  # TFG302
    tf.function(jit_compile=True)(forward)(x)  # TFG302
    xla(forward)(x)  # TFG302
    xla_partial(forward)(x)  # TFG302
    g = tf.function(func=lambda v: tf.reduce_sum(v * 2.0))  # TFG302
    g(x)
    if USE_XLA:
        h = tf.function(forward, jit_compile=True)  # TFG302
    else:
        h = tf.function(forward)  # TFG302
    for batch in ds:
        h(batch)

    @tf.function  # TFG302
    def inner(v):
        return tf.reduce_sum(tf.square(v)) + 1.0

    inner(x)
    step(x)

    # Near misses: made but not called in the loop, made only on the first iteration.
    unused = tf.function(forward)
    if epoch == 0:
        first = tf.function(forward)
        first(x)

outs = [tf.function(forward)(b) for b in ds]  # TFG302

# Near misses: a different function in each iteration (a table of steps, built once).
STEPS = {"train": forward, "eval": forward}
for name, body in STEPS.items():
    tf.function(body)(x)
compiled = {name: tf.function(body) for name, body in STEPS.items()}
for epoch in range(3):
    for name in compiled:
        compiled[name](x)


# A helper that makes a new tf.function on each call, called from a loop.
def evaluate(v):
    predict = tf.function(forward)  # TFG302
    return predict(v)


def run_epoch():
    for batch in ds:
        evaluate(batch)


def main():
    for epoch in range(3):
        run_epoch()


# A factory whose result the loop calls.
def make_step():
    return tf.function(forward)  # TFG302


def make_named_step():
    @tf.function  # TFG302
    def named(v):
        return tf.reduce_sum(tf.square(v)) - 1.0

    return named


def train():
    for epoch in range(3):
        make_step()(x)
        s = make_named_step()
        s(x)
    once = make_step()  # made once, reused: fine
    for epoch in range(3):
        once(x)


# Near misses: the factory is cached, or the result is kept per configuration.
@functools.lru_cache(maxsize=None)
def cached_step():
    return tf.function(forward)


def make_scaled(scale):
    return tf.function(lambda v: tf.reduce_sum(v) * scale)


def sweep():
    for epoch in range(3):
        cached_step()(x)
    for scale in [1.0, 2.0]:
        make_scaled(scale)(x)


class Trainer:
    def __init__(self):
        self._step = None
        self._eval = tf.function(forward)  # once per trainer: fine

    def cached(self, v):
        if self._step is None:
            self._step = tf.function(forward)
        return self._step(v)

    def early_return(self, v):
        if hasattr(self, "_compiled"):
            return self._compiled(v)
        self._compiled = tf.function(forward)
        return self._compiled(v)

    def recreated(self, v):
        self._fresh = tf.function(self._body)  # TFG302
        return self._fresh(v)

    def wraps_argument(self, fn, v):
        return tf.function(fn)(v)  # maybe another function each call: not flagged

    def _body(self, v):
        return tf.reduce_sum(tf.square(v)) * 3.0


trainer = Trainer()
for batch in ds:
    trainer.cached(batch)
    trainer.early_return(batch)
    trainer.recreated(batch)
    trainer.wraps_argument(forward, batch)


def setup_once():
    fn = tf.function(forward)  # setup_once() is never called in a loop
    return fn(x)


setup_once()


# Keras callbacks: per-epoch and per-batch hooks repeat; on_train_begin runs once per fit.
class EvalCallback(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        f = tf.function(forward)  # TFG302
        f(x)

    def on_train_batch_end(self, batch, logs=None):
        tf.function(forward)(x)  # TFG302

    def on_train_begin(self, logs=None):
        tf.function(forward)(x)


class TfKerasCallback(tfk.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        tf.function(forward)(x)  # TFG302


class LegacyCallback(tf_keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        tf.function(forward)(x)  # TFG302


class NotACallback:
    def on_epoch_end(self, epoch, logs=None):
        tf.function(forward)(x)  # not Keras: nobody is known to call it repeatedly


# Keras call() runs on every forward pass (eagerly when the layer is called eagerly).
class Scale(keras.layers.Layer):
    def call(self, inputs):
        f = tf.function(forward)  # TFG302
        return f(inputs)


class Model(tfk.Model):
    def __init__(self):
        super().__init__()
        self.fast = tf.function(forward)  # once: fine

    def call(self, inputs):
        return self.fast(inputs)


# Inside a tf.function the inner one is made once per trace of the outer one: not flagged.
@tf.function
def outer(v):
    inner_step = tf.function(forward)
    return inner_step(v)


# Near misses: made in a loop and kept for later, not called there.
REGISTRY = {}
for key in ("a", "b"):

    @tf.function
    def registered(v):
        return tf.reduce_sum(tf.square(v)) + 2.0

    REGISTRY[key] = registered


def serve_forever(requests):
    while True:
        handler = tf.function(forward)  # TFG302
        handler(requests.get())


class Distiller(tf.keras.Model):
    """Keras steps: a tf.function made per step is made per trace, and per batch eagerly."""

    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher
        self.teacher_fn = tf.function(teacher.call)  # once: fine

    def train_step(self, data):
        images, labels = data
        teacher_fn = tf.function(self.teacher.call)  # TFG302
        return {"loss": tf.reduce_mean(teacher_fn(images) - self.student(images))}

    def test_step(self, data):
        images, labels = data
        return {"loss": tf.reduce_mean(self.teacher_fn(images))}


def make_loss(smoothing):
    def loss(y, p):
        return tf.reduce_mean(tf.square(y - p)) * (1.0 - smoothing)

    return loss


def sweep(y, p, smoothings):
    for smoothing in smoothings:
        loss_fn = tf.function(make_loss(smoothing))  # TFG302
        loss_fn(y, p)
    for fn in (make_loss(0.0), make_loss(0.1)):
        tf.function(fn)(y, p)  # a different function each iteration: traced once each


def evaluate_with(model, ds):
    predict = tf.function(model.call)  # TFG302
    return [predict(x) for x in ds]


def evaluate_each(models, ds):
    return [tf.function(m.call)(ds) for m in models]


def fit(model, candidates, ds, epochs):
    for epoch in range(epochs):
        evaluate_with(model, ds)  # the same model every epoch: recreated and retraced
    for candidate in candidates:
        evaluate_each([candidate], ds)
