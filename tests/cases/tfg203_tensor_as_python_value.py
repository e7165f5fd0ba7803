"""TFG203 cases: unpacking, iterating, and indexing Python containers with symbolic tensors;
every import spelling, structures that are fine to unpack, shadowing and escape hatches."""

import collections

import keras
import tensorflow as tf2
from keras import ops
from tensorflow import function

CLASS_WEIGHTS = [0.2, 0.3, 0.5]
LABELS = ("cat", "dog")
VOCAB = {"a": 1, "b": 2}


@tf2.function
def unpacking(x):
    h, w = tf2.shape(x)  # TFG203
    (n,) = tf2.shape(tf2.reshape(x, [-1]))  # TFG203
    first, *rest = tf2.reshape(x, [-1])  # TFG203
    lo, hi = tf2.reduce_min(x), tf2.reduce_max(x)  # a tuple display: fine
    (a, b), c = tf2.reduce_sum(x, axis=0), 1  # TFG203
    p, q = tf2.unstack(tf2.reshape(x, [2, -1]))  # a Python list of tensors
    mean, var = tf2.nn.moments(x, axes=[0])
    values, indices = tf2.math.top_k(tf2.reshape(x, [-1]), k=2)
    rows, cols = x.shape[0], x.shape[1]  # static dimensions
    height, width = x.shape[1:3]
    y_unique, y_idx = tf2.raw_ops.Unique(x=tf2.reshape(x, [-1]))  # a named tuple
    return h, w, n, first, rest, lo, hi, a, b, c, p, q, mean, var, values, indices, rows, cols


@function
def stars(x):
    y = tf2.reshape(x, [-1])
    parts = [*y]  # TFG203
    total = tf2.add_n([*tf2.unstack(y)])  # unstack gives a list: fine
    tf2.print(*y)  # TFG203
    return parts, total


@tf2.compat.v2.function
def builtins_on_tensors(x):
    y = tf2.reshape(x, [-1])
    a = list(y)  # TFG203
    b = tuple(y * 2)  # TFG203
    c = set(y)  # TFG203
    d = any(y > 0)  # TFG203
    e = all(y > 0)  # TFG203
    f = sum(y)  # TFG203
    g = max(y)  # TFG203
    h = min(tf2.reduce_sum(x), 0.0)  # TFG203
    i = sorted(y)  # converted by AutoGraph (tf.sort)
    j = enumerate(y)  # TFG203
    k = zip(y, y)  # TFG203
    m = reversed(y)  # TFG203
    n = 1.0 in y  # TFG203
    o = sum([tf2.reduce_sum(x), 1.0])  # a Python list of tensors
    p = max(x.shape[0], 1)  # static
    return a, b, c, d, e, f, g, h, i, j, k, m, n, o, p


@tf2.function
def converted_conversions(x):
    y = tf2.reshape(x, [-1])
    n = len(y)  # AutoGraph: tf.shape
    m = int(tf2.reduce_sum(y))  # AutoGraph: tf.cast
    z = float(tf2.reduce_max(y))
    out = tf2.zeros([])
    for v in y:  # AutoGraph: tf.while_loop
        out += v
    for k in range(n):  # AutoGraph: tf.range
        out += tf2.cast(k, tf2.float32)
    return n, m, z, out


@tf2.function
def loop_unpacking(x):
    pairs = tf2.reshape(x, [-1, 2])
    total = tf2.zeros([])
    for first, second in pairs:  # TFG203
        total += first * second
    for row in pairs:  # fine: one name per row
        total += row[0] * row[1]
    for i, v in enumerate(tf2.reshape(x, [-1])):  # TFG203
        total += v
    return total


@tf2.function
def comprehensions(x):
    y = tf2.reshape(x, [-1])
    doubled = [v * 2 for v in y]  # TFG203
    squares = tf2.stack(list(v * v for v in tf2.range(3)))  # TFG203
    named = {str(i): i for i in range(3)}  # Python range
    split = [p * 2 for p in tf2.split(y, 2)]  # a Python list of tensors
    return doubled, squares, named, split


@tf2.function
def indexing(x):
    weights = [0.1, 0.9]
    table = {0: "zero", 1: "one"}
    total = tf2.zeros([])
    for i in tf2.range(2):
        total += weights[i] * x  # TFG203
        total += CLASS_WEIGHTS[int(i)] * x  # TFG203
        tf2.print(LABELS[i], table[i])  # TFG203
        tf2.print(VOCAB.get(i, 0))  # TFG203
    seen = {tf2.reduce_sum(x): 1}  # TFG203
    head = weights[: tf2.size(x)]  # TFG203
    first = weights[0] + CLASS_WEIGHTS[x.shape[0] - 1]  # Python ints
    picked = tf2.gather(tf2.constant(weights), tf2.argmax(x))  # the fix
    return total, seen, head, first, picked


@tf2.function
def unknown_containers(x, lookup, items=(1, 2)):
    i = tf2.argmax(x)
    a = lookup[i]  # a parameter: may be a tensor
    b = items[i]  # a parameter default: the caller may pass a tensor instead
    c = x[i]  # tensor indexing: fine
    d = tf2.constant([1, 2])[i]
    return a, b, c, d


class Encoder(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.scales = [1.0, 2.0]
        self.blocks = collections.OrderedDict()

    def call(self, inputs):
        image, mask = inputs  # Keras inputs may be a list: fine
        k = ops.argmax(ops.sum(image, axis=0))
        scale = self.scales[k]  # TFG203
        block = self.blocks[k]  # TFG203
        y0, y1 = ops.shape(image)[:2]  # keras.ops.shape is a Python tuple
        top, idx = ops.top_k(ops.sum(image, axis=0), k=1)
        return image * mask * scale, block, y0, y1, top, idx


class Model(keras.Model):
    def train_step(self, data):
        x, y = data  # Keras data: fine
        first, second = ops.sum(x, axis=0)  # TFG203
        return {"first": first, "second": second, "y": y}


@tf2.function
def bare_parameters(batch, features, n):
    x, y = batch  # called as bare_parameters((x, y), ...): fine
    for key, value in features.items():  # a dict
        x = x + value
    values = [v for v in features.values()]
    return x, y, values, list(batch), range(n)


def decode(line):
    a, b, c = tf2.io.decode_csv(line, [[0.0], [0.0], [0.0]])  # a list of tensors
    feats = tf2.io.parse_single_example(line, {"x": tf2.io.FixedLenFeature([], tf2.float32)})
    names = [k for k in feats]  # a dict
    rows = [r for r in tf2.strings.split(line)]  # TFG203
    return a + b + c, names, rows


ds = tf2.data.Dataset.from_tensor_slices(["1,2,3"]).map(decode)


@tf2.function
def guarded(x):
    if tf2.executing_eagerly():
        return list(tf2.reshape(x, [-1]))  # eager only
    return x


@tf2.function
def early_return(x):
    if not tf2.executing_eagerly():
        return x
    h, w = tf2.shape(x)  # eager only
    return h * w


@tf2.function
def escape(x):
    return tf2.py_function(lambda v: sum(list(v)), [x], tf2.float32)


@tf2.function
def shadowed(x):
    list = tf2.identity  # noqa: A001 - not the builtin
    return list(tf2.reshape(x, [-1]))


def eager_only(x):
    a, b = tf2.unstack(x)
    c, d = tf2.shape(x)  # eager code: fine
    return a, b, c, d
