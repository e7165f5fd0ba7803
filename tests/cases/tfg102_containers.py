"""TFG102 cases."""
import collections

import tensorflow as tf

LOSSES = []
STATS = {}
SEEN = set()
counts = collections.defaultdict(int)


@tf.function
def step(x, history, cache=None, buf=[]):
    LOSSES.append(x)  # TFG102
    STATS["last"] = x  # TFG102
    SEEN.add("step")  # TFG102
    counts["calls"] += 1  # TFG102
    history.append(x)  # TFG102
    buf.extend([x])  # TFG102
    del STATS["old"]  # TFG102
    parts = []
    for i in range(3):
        parts.append(x * i)
    local = {"a": x}
    local["b"] = x
    local.update(c=x)
    return tf.stack(parts)


class Tracker(tf.Module):
    def __init__(self):
        self.items = []
        self.layers = tf.keras.Sequential()
        self.index = {}

    @tf.function
    def __call__(self, x):
        self.items.append(x)  # TFG102
        self.layers.add(tf.keras.layers.Dense(1))
        self.index.pop("k", None)  # TFG102
        self.index["k"] = x  # TFG102
        return x


def make_fn():
    collected = []

    def fn(x):
        collected.append(x)  # TFG102
        return x

    return fn


ds = tf.data.Dataset.range(4).map(make_fn())


def parse(example):
    example["label"] = tf.cast(example["label"], tf.int32)
    example.pop("unused")
    return example


parsed = tf.data.TFRecordDataset("x").map(parse)


@tf.function
def outer(x):
    acc = []

    def body(v):
        acc.append(v)  # list of the same trace: not flagged
        return v

    tf.nest.map_structure(body, [x])
    return tf.stack(acc)


def eager_training(ds):
    for x in ds:
        LOSSES.append(step(x, []))
