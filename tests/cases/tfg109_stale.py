"""TFG109 cases."""
import tensorflow as tf

learning_rate = 0.1
MOMENTUM = 0.9
threshold = 0.5
mode = "train"
ALPHA = 1.0
if ALPHA > 2:
    BETA = 1.0
else:
    BETA = 2.0

try:
    import horovod  # noqa: F401
    HVD = True
except ImportError:
    HVD = False


def set_mode(m):
    global mode
    mode = m


@tf.function
def train_step(w, g):
    lr = learning_rate * MOMENTUM  # TFG109
    lr2 = learning_rate + 1
    if mode == "train":  # TFG109
        w = w - lr * g - lr2
    return w * BETA * (2.0 if HVD else 1.0) * ALPHA


@tf.function
def other(x):
    global threshold
    threshold = 0.1  # TFG105
    return x > threshold


@tf.function
def reader(x):
    return x > threshold  # TFG109


def make_step(scale):
    factor = scale

    @tf.function
    def step(x):
        return x * factor * scale

    return step


def make_stale():
    factor = 1.0

    @tf.function
    def step(x):
        return x * factor  # TFG109

    factor = 2.0
    return step


@tf.function
def traced_outer(x):
    y = x * 2

    def inner(v):
        return v + y

    y = y + 1
    return tf.map_fn(inner, x)


for epoch in range(3):
    learning_rate = 0.1 * 0.5**epoch
    train_step(tf.ones(2), tf.ones(2))


def build_pipeline(files, params, metric_fn=None):
    """Setup before the definition is not staleness: the graph sees the final value."""
    num_shards = 1
    if params.sharding:
        num_shards = params.num_shards
    metrics = metric_fn() if metric_fn else []
    if not isinstance(metrics, list):
        metrics = [metrics]
    sizes = [64 // n for n in (1, 2, 4)]
    sizes = tf.constant(sizes, dtype=tf.int64)

    def window_size(bucket):
        return sizes[bucket] * num_shards + len(metrics)

    ds = tf.data.Dataset.from_tensor_slices(files)
    ds = ds.map(lambda f: ds.cardinality() + f)
    return ds.group_by_window(lambda x: x, lambda k, d: d, window_size_func=window_size)


@tf.function
def uses_late_constant(x):
    return x * LATE  # assigned once, after the def: a constant


LATE = 3.0
