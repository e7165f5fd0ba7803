import time

import tensorflow as tf

from encoder import Encoder


def bench():
    enc = Encoder()
    x = tf.ones([2, 4])
    enc.encode(x)  # warms up encode() only
    start = time.perf_counter()
    enc.encode_scaled(x, 2.0)  # TFG403
    return time.perf_counter() - start


def bench_warm():
    enc = Encoder()
    x = tf.ones([2, 4])
    enc.encode(x)
    start = time.perf_counter()
    enc.encode(x)
    return time.perf_counter() - start


def sweep():
    enc = Encoder()
    x = tf.ones([2, 4])
    for epoch in range(5):
        enc.encode_scaled(x, epoch)  # TFG303
    for epoch in range(5):
        enc.describe()
