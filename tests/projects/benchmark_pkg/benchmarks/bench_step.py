"""Times the model's step from another module, with and without a warm-up call."""

import time
import timeit

import tensorflow as tf

from benchmarks import model
from benchmarks.model import eager_step, train_step

from .model import embed, xla_step

BATCH = tf.random.normal([64, 256])


def cold():
    start = time.perf_counter()
    for _ in range(100):
        train_step(BATCH)  # TFG403
    return time.perf_counter() - start


def cold_module_attribute():
    start = time.perf_counter()
    model.serve(BATCH)  # TFG403
    return time.perf_counter() - start


def cold_timeit():
    return timeit.timeit(lambda: embed(BATCH), number=10)  # TFG403


def warm():
    eager_step(BATCH)  # a plain function: warms nothing up
    xla_step(BATCH)  # warm-up call
    start = time.perf_counter()
    for _ in range(100):
        xla_step(BATCH)
    return time.perf_counter() - start


def eager():
    start = time.perf_counter()
    eager_step(BATCH)
    return time.perf_counter() - start


def bucket_sizes():
    for n in (32, 64, 128):
        xla_step(tf.zeros([n, 256]))  # reported at the def in model.py
