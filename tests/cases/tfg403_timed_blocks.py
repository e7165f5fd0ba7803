"""TFG403: a time.perf_counter()/time.time() pair around the first call of a tf.function."""

import time
import time as clock
from time import monotonic as now
from time import perf_counter
from timeit import default_timer as timer

import tensorflow
import tensorflow as tf
import tensorflow as tf2
from tensorflow import function

x = tf.random.normal([64, 256])
w = tf.random.normal([256, 256])


@tf.function
def train_step(x, w):
    return tf.reduce_mean(tf.nn.relu(tf.matmul(x, w)))


@tf2.function(reduce_retracing=True)
def eval_step(x, w):
    return tf2.reduce_max(tf2.matmul(x, w))


@function
def predict(x, w):
    return tf.nn.softmax(tf.matmul(x, w))


@tf.compat.v2.function
def loss_fn(x, w):
    return tf.reduce_sum(tf.square(tf.matmul(x, w)))


encode = tensorflow.function(lambda v: tf.nn.l2_normalize(v, axis=-1))


class Trainer(tf.Module):
    @tf.function
    def step(self, x, w):
        return tf.reduce_mean(tf.matmul(x, w))


# Module level: every loop iteration is timed, the first one traces.
start = time.perf_counter()
for _ in range(100):
    train_step(x, w)  # TFG403
elapsed = time.perf_counter() - start

t0 = clock.time()
eval_step(x, w)  # TFG403
t1 = clock.time()
print(f"eval: {t1 - t0:.4f}s")

begin = perf_counter()
with tf.device("/CPU:0"):
    probs = predict(x, w)  # TFG403
print("predict", perf_counter() - begin)

tic = timer()
total = loss_fn(x, w) + loss_fn(x, w)  # TFG403
toc = timer()
print(toc - tic)

trainer = Trainer()
t_start = now()
trainer.step(x, w)  # TFG403
print(now() - t_start)


def benchmark_encode(batch):
    start = time.process_time()
    for _ in range(10):
        encode(batch)  # TFG403
    return time.process_time() - start


def benchmark_fresh(batch):
    @tf.function
    def double(v):
        return tf.multiply(v, 2.0)

    start = time.perf_counter_ns()
    double(batch)  # TFG403
    return time.perf_counter_ns() - start


# Near misses.
def warmed_up(batch):
    predict(batch, w)  # warm-up: traced before the clock starts
    start = time.perf_counter()
    for _ in range(10):
        predict(batch, w)
    return time.perf_counter() - start


def concrete_first(batch):
    concrete = loss_fn.get_concrete_function(batch, w)  # traced here
    start = time.perf_counter()
    loss_fn(batch, w)
    return time.perf_counter() - start, concrete


def python_only(batch):
    def plain(v):
        return v * 2.0

    start = time.perf_counter()
    plain(batch)
    return time.perf_counter() - start


def keras_fit(model, data):
    start = time.perf_counter()
    model.fit(data, epochs=1)  # not a tf.function this module defines
    return time.perf_counter() - start


def maybe_called(batch, verbose):
    @tf.function
    def halve(v):
        return tf.multiply(v, 0.5)

    start = time.perf_counter()
    if verbose:
        halve(batch)  # may not run: not certain
    return time.perf_counter() - start


def measure_tracing(batch):
    @tf.function
    def triple(v):
        return tf.multiply(v, 3.0)

    trace_start = time.perf_counter()
    triple(batch)  # timing the first call on purpose
    trace_seconds = time.perf_counter() - trace_start
    return trace_seconds


def no_pair(batch):
    @tf.function
    def square(v):
        return tf.square(v)

    stamp = time.time()  # a timestamp, never subtracted
    square(batch)
    return stamp


def self_state(trainer, batch):
    start = time.perf_counter()
    trainer.step(batch, w)  # the object may have run before: unknown
    return time.perf_counter() - start


class Bench:
    def __init__(self):
        self.step = tf.function(self._step)

    def _step(self, v):
        return tf.reduce_sum(v)

    def run(self, v):
        start = time.perf_counter()
        self.step(v)  # other methods may have called it first
        return time.perf_counter() - start


def time_shadowed(batch):
    time = Stopwatch()
    start = time.time()
    loss_fn(batch, w)
    return time.time() - start


class Stopwatch:
    def time(self):
        return 0.0


@tf.function
def relu6(v):
    return tf.nn.relu6(tf.multiply(v, 6.0))


def preprocess(batch):
    return relu6(batch)


def timed_after_other_use(batch):
    start = time.perf_counter()
    relu6(batch)  # preprocess() may have traced it already: only this scope's order is known
    return time.perf_counter() - start


def main(batch):
    preprocess(batch)
    return timed_after_other_use(batch)


@tf.function
def leaky(v):
    return tf.nn.leaky_relu(tf.multiply(v, 2.0))


def never_called_here(batch):
    return leaky(batch)


def timed_leaky(batch):
    start = time.perf_counter()
    leaky(batch)  # TFG403
    return time.perf_counter() - start


@tf.function
def gelu(v):
    return tf.nn.gelu(tf.multiply(v, 2.0))


def warm_gelu(batch):
    return gelu(batch)


warm_gelu(x)  # module code before the timer calls a function that calls gelu()
t0 = time.perf_counter()
gelu(x)
print(time.perf_counter() - t0)


@tf.function
def selu(v):
    return tf.nn.selu(tf.multiply(v, 2.0))


def later_use(batch):
    return selu(batch)


t0 = time.perf_counter()
selu(x)  # TFG403
print(time.perf_counter() - t0)
later_use(x)  # runs after the timed block


@tf.function
def elu(v):
    return tf.nn.elu(tf.multiply(v, 2.0))


def train_with_budget(dataset, budget):
    start = time.monotonic()
    for batch in dataset:
        elu(batch)
        if time.monotonic() - start > budget:  # a time budget, not a measurement
            break


@tf.function
def softplus(v):
    return tf.nn.softplus(tf.multiply(v, 2.0))


def train_with_progress(dataset):
    start = time.time()
    for step, batch in enumerate(dataset):
        softplus(batch)
        if step % 100 == 0:
            print(step, time.time() - start)  # elapsed wall-clock time: tracing belongs in it


@tf.function
def hard_sigmoid(v):
    return tf.nn.relu6(v + 3.0) / 6.0


@tf.function
def mish(v):
    return v * tf.math.tanh(tf.math.softplus(v))


def fit_epochs(dataset, epochs):
    for epoch in range(epochs):
        start = time.time()
        for batch in dataset:
            mish(batch)  # a loop over data: an epoch timer, tracing belongs in it
        print(f"epoch {epoch}: {time.time() - start:.1f}s")


def comprehension_bench(batch):
    start = time.perf_counter()
    outputs = [hard_sigmoid(batch) for _ in range(10)]  # TFG403
    return time.perf_counter() - start, outputs
