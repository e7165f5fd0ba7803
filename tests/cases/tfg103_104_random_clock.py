"""TFG103/TFG104 cases."""
import datetime as dt
import os
import random as rnd
import secrets
import time
import uuid
from datetime import date
from os import environ, getenv
from random import choice

import numpy
import numpy as np
import tensorflow as tf
from numpy.random import default_rng

RNG = np.random.default_rng(42)
PYRNG = rnd.Random(0)
SEED = int(os.environ.get("SEED", "0"))


def augment(image):
    if rnd.random() < 0.5:  # TFG103
        image = tf.image.flip_left_right(image)
    k = choice([0, 1, 2])  # TFG103
    noise = numpy.random.normal(0, 1)  # TFG103
    jitter = RNG.uniform(-1, 1)  # TFG103
    g = default_rng()  # TFG103
    s = secrets.token_hex(4)  # TFG103
    u = uuid.uuid4()  # TFG103
    p = PYRNG.random()  # TFG103
    return tf.image.rot90(image, k) + noise + jitter, s, u, p, g


ds = tf.data.Dataset.list_files("*.jpg").map(augment, num_parallel_calls=tf.data.AUTOTUNE)


@tf.function
def timed(x):
    t0 = time.perf_counter()  # TFG104
    now = dt.datetime.now()  # TFG104
    today = date.today()  # TFG104
    user = getenv("USER")  # TFG104
    home = environ["HOME"]  # TFG104
    debug = os.environ.get("DEBUG")  # TFG104
    stamp = tf.timestamp()
    return x, t0, now, today, user, home, debug, stamp


def eager(files):
    rnd.shuffle(files)
    start = time.time()
    return files, start, np.random.rand(3), uuid.uuid4()


@tf.function
def fine(x, time=None, random=None):
    a = tf.random.uniform([])
    b = tf.random.Generator.from_seed(1).normal([2])
    c = time.time() if time else 0
    return x + a + b + c + SEED + random.random()
