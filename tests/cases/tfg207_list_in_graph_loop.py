"""TFG207 cases: growing a Python list inside a loop AutoGraph turns into tf.while_loop."""
import tensorflow as tf
import tensorflow as tf2
from tensorflow import function, range as tf_range

HISTORY = []


@tf.function
def append_in_range(x, n):
    out = []
    for i in tf.range(n):
        out.append(x * tf.cast(i, tf.float32))  # TFG207
    return tf.stack(out)


@tf.function
def other_growth(x, n):
    a, b, c, d = [], list(), [x], []
    for i in tf.range(n):
        a.extend([x])  # TFG207
        b.insert(0, x)  # TFG207
        c += [x * 2.0]  # TFG207
        d = d + [x]  # TFG207
    return a, b, c, d


@tf.function
def while_tensor(x):
    rows = []
    i = tf.constant(0)
    while i < tf.shape(x)[0]:
        rows.append(x[i] * 2.0)  # TFG207
        i += 1
    return tf.stack(rows)


@tf.function
def over_tensor(x):
    doubled = []
    for v in x:
        doubled.append(v * 2.0)  # TFG207
    indexed = []
    for i in range(tf.shape(x)[0]):
        indexed.append(x[i])  # TFG207
    return tf.stack(doubled), tf.stack(indexed)


@tf.function
def over_dataset():
    ds = tf.data.Dataset.range(3)
    seen = []
    for v in ds:
        seen.append(v)  # TFG207
    pairs = []
    for j, v in enumerate(ds):
        pairs.append(v * j)  # TFG207
    return len(seen), pairs


@tf.function
def nested_and_conditional(x, n):
    out = []
    for i in tf.range(n):
        for k in range(2):
            out.append(x * k)  # TFG207
        if i > 0:
            out.append(x)  # TFG207
    return tf.stack(out)


@tf.function
def outer_list(x, n):
    for i in tf.range(n):
        HISTORY.append(x * 2.0)  # TFG102, TFG207
    return x


class Collector(tf.Module):
    def __init__(self):
        self.items = []

    @tf.function
    def __call__(self, x, n):
        for i in tf.range(n):
            self.items.append(x)  # TFG102, TFG207
        return tf.stack(self.items)


@tf2.function
def other_spelling(x, n):
    out = []
    for i in tf2.range(n):
        out.append(x)  # TFG207
    return out


@function
def from_import(x, n):
    out = []
    for i in tf_range(n):
        out.append(x)  # TFG207
    return out


def helper(x, n):
    out = []
    for i in tf.range(n):
        out.append(x)  # TFG207
    return tf.stack(out)


@tf.function
def calls_helper(x):
    return helper(x, 3)


def per_element(x):
    parts = []
    for i in tf.range(3):
        parts.append(tf.cast(x, tf.int32) * i)  # TFG207
    return tf.stack(parts)


mapped = tf.data.Dataset.range(4).map(per_element)


@tf.function
def closure_of_traced(x):
    out = []

    def body():
        for i in tf.range(3):
            out.append(x)  # TFG207

    body()
    return tf.stack(out)


# --- fine ---------------------------------------------------------------------------


@tf.function
def python_range(x):
    out = []
    for i in range(3):
        out.append(x * i)
    for item in [x, x * 2.0]:
        out.append(item)
    for i in range(len(out)):
        out.append(x)
    j = 0
    while j < 3:
        out.append(x)
        j += 1
    return tf.stack(out)


@tf.function
def list_per_iteration(x, n):
    total = tf.constant(0.0)
    for i in tf.range(n):
        parts = []
        parts.append(x)
        parts.append(x * 2.0)
        total += tf.reduce_sum(tf.stack(parts))
    return total


@tf.function
def tensor_array(x, n):
    ta = tf.TensorArray(tf.float32, size=n)
    for i in tf.range(n):
        ta = ta.write(i, x)
    return ta.stack()


@tf.function
def only_used_in_loop(x, n):
    hist = []
    total = tf.constant(0.0)
    for i in tf.range(n):
        hist.append(x * 2.0)
        total += hist[-1]
    return total


@tf.function
def item_assignment(x, n):
    out = [x, x]
    d = {}
    for i in tf.range(n):
        out[0] = x * 2.0
        d["k"] = x
    return tf.stack(out), d["k"]


class Buffer:
    def append(self, v):
        return v


@tf.function
def not_a_list(x, n):
    buf = Buffer()
    for i in tf.range(n):
        buf.append(x)
    return x


@tf.function(autograph=False)
def no_autograph(x):
    out = []
    for i in range(3):
        out.append(x)
    return tf.stack(out)


@tf.autograph.experimental.do_not_convert
def not_converted(x, n):
    out = []
    for i in tf.range(n):  # TFG203
        out.append(x)
    return out


@tf.function
def calls_not_converted(x):
    return not_converted(x, 3)


def eager(ds):
    out = []
    for v in ds:
        out.append(v)
    for i in tf.range(3):
        out.append(i)
    return out


@tf.function
def py_function_body(x):
    def collect(v):
        out = []
        for i in tf.range(3):
            out.append(v)
        return tf.stack(out)

    return tf.py_function(collect, [x], tf.float32)


@tf.function
def enumerate_tensor(x):
    out = []
    for j, v in enumerate(x):  # Python iteration of a tensor: another rule's concern
        out.append(v)
    return out
