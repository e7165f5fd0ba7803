"""TFG304: jit_compile=True without input_signature, called with shapes that vary."""

import numpy as np
import tensorflow as tf
from tensorflow import function as tf_function

FEATURES = 4


@tf.function(jit_compile=True)
def forward(x):  # TFG304
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


@tf_function(jit_compile=True, reduce_retracing=True)
def normalize(x):  # TFG304
    return tf.math.l2_normalize(x, axis=-1)


@tf.function(experimental_compile=True)
def pairwise(a, b):  # TFG304
    return tf.matmul(a, b, transpose_b=True)


def _loss(y, p):  # TFG304
    return tf.reduce_mean(tf.square(y - p))


loss = tf.function(_loss, jit_compile=True)


@tf.function(jit_compile=True)
def attention(q, k):  # TFG304
    scores = tf.matmul(q, k, transpose_b=True)
    return tf.nn.softmax(scores * tf.math.rsqrt(tf.cast(tf.shape(k)[-1], tf.float32)))


@tf.function(jit_compile=True)
def project(x):  # TFG304
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


def sweep(batch=8, depth=64):
    for seq_len in (128, 256, 512):
        q = tf.random.normal([batch, seq_len, depth])
        attention(q, q)
    project(tf.zeros([batch, 16]))
    project(tf.zeros([batch, 32]))


@tf.function(jit_compile=True)
def fixed(x):
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


@tf.function
def plain(x):
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


def run():
    small = tf.zeros([8, FEATURES])
    large = tf.random.normal([16, FEATURES])
    forward(small)
    forward(large)

    for n in (32, 64, 128):
        normalize(tf.ones([n, FEATURES]))

    pairwise(np.zeros((8, 4), np.float32), b=np.ones((8, 4), np.float32))
    pairwise(np.zeros((8, 4), np.float32), b=np.ones((12, 4), np.float32))

    for batch in range(1, 4):
        loss(tf.zeros([batch]), tf.ones([batch]))


def near_misses(dataset, sizes):
    # The same shape every time: compiled once.
    fixed(tf.zeros([8, 4]))
    fixed(tf.ones((8, 4)))
    for _ in range(3):
        fixed(tf.random.uniform([8, FEATURES]))
    # A loop over one size only.
    for n in (8,):
        fixed(tf.zeros([n, 4]))
    # No XLA: retracing per shape is another matter.
    plain(tf.zeros([8, 4]))
    plain(tf.zeros([16, 4]))
    # Shapes not written in the source: not certain (a dataset batched by 8 may hold a
    # multiple of 8 elements; the sizes may all be equal).
    for batch in dataset:
        fixed(batch)
    for n in sizes:
        fixed(tf.zeros([n, 4]))
    # Only the unknown dimensions may differ: not certain.
    fixed(tf.zeros([len(sizes), 4]))
    fixed(tf.zeros([sizes[0], 4]))
    # The shape is built once, before the loop: the same tensor every time.
    n = 4
    for n in (16, 8):
        pass
    y = tf.zeros([n, 4])
    for _ in range(2):
        fixed(y)
