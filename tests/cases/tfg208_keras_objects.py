"""TFG208 cases: Keras layers, models, optimizers and metrics built in traced code (Keras 3)."""
import keras
import tensorflow as tf
from keras import layers
from tensorflow import keras as tfk
from tensorflow.keras.layers import Dense as TfDense

shared = keras.layers.Dense(4)
optimizer = keras.optimizers.Adam()
mean_loss = keras.metrics.Mean()


@tf.function
def weighted(x, images):
    a = tf.keras.layers.Dense(4)(x)  # TFG208
    b = keras.layers.Dense(4)(x)  # TFG208
    c = tfk.layers.Dense(4)(x)  # TFG208
    d = TfDense(4)(x)  # TFG208
    e = layers.Conv2D(8, 3)(images)  # TFG208
    f = layers.BatchNormalization()(x)  # TFG208
    g = layers.Embedding(10, 4)(tf.cast(x, tf.int32))  # TFG208
    h = layers.RandomFlip()(images)  # TFG208
    return a + b + c + d + f + tf.reduce_sum(e) + tf.reduce_sum(g) + tf.reduce_sum(h)


@tf.function
def weightless(x, images):
    a = layers.Flatten()(images)
    b = layers.Reshape((-1,))(images)
    c = layers.Activation("relu")(x)
    d = layers.ReLU()(x)
    e = layers.Softmax()(x)
    f = layers.MaxPooling2D()(images)
    g = layers.GlobalAveragePooling2D()(images)
    h = layers.Concatenate()([x, x])
    i = layers.Add()([x, x])
    j = layers.Lambda(lambda t: t * 2)(x)
    k = layers.Rescaling(1 / 255.0)(images)
    m = layers.Normalization(mean=0.0, variance=1.0)(x)
    n = keras.losses.MeanSquaredError()(x, c)
    o = keras.metrics.sparse_categorical_accuracy(tf.zeros([2]), x)
    p = keras.Sequential([layers.Flatten()])(images)
    q = layers.Attention()([x, x])
    return a, b, c, d, e, f, g, h, i, j, k, m, n, o, p, q, shared(x)


@tf.function
def owners(x):
    opt = keras.optimizers.Adam(1e-3)  # TFG208
    sgd = tf.optimizers.SGD()  # TFG208
    metric = keras.metrics.Mean()  # TFG208
    auc = tfk.metrics.AUC()  # TFG208
    drop = layers.Dropout(0.5)(x)  # TFG208
    noise = layers.GaussianNoise(0.1)  # TFG208
    mean_loss.update_state(x)
    return drop, opt, sgd, metric, auc, noise


@tf.function
def constructed_only(x):
    head = layers.Dense(4)  # built later, elsewhere: nothing created here
    model = keras.Sequential([layers.Dense(4)])
    return head, model, x


@tf.function
def called_later(x):
    head = layers.Dense(4)  # TFG208
    model = keras.Sequential([layers.Dense(4), layers.Dropout(0.1)])  # TFG208
    with_input = keras.Sequential([keras.Input((4,)), layers.Dense(2)])  # TFG208
    net = keras.applications.MobileNetV2(weights=None)  # TFG208
    return head(x) + model(x), with_input, net


class Block(layers.Layer):
    def __init__(self):
        super().__init__()
        self.proj = layers.Dense(4)

    def call(self, x):
        return self.proj(x)


class Gate(layers.Layer):
    def call(self, x):
        return tf.nn.sigmoid(x) * x


class Counter(keras.metrics.Metric):
    def __init__(self):
        super().__init__()
        self.total = self.add_weight(name="total", initializer="zeros")

    def update_state(self, x):
        self.total.assign_add(tf.reduce_sum(x))

    def result(self):
        return self.total


@tf.function
def local_classes(x):
    y = Block()(x)  # TFG208
    z = Gate()(x)
    c = Counter()  # TFG208
    return y + z, c


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(4)
        self.head = None
        self.tracker = keras.metrics.Mean()

    def build(self, shape):
        self.extra = layers.Dense(2)
        self.extra.build(shape)

    def call(self, x):
        if self.head is None:
            self.head = layers.Dense(1)
        if not hasattr(self, "gate"):
            self.gate = layers.Dense(1)
        aux = layers.Dense(1)(x)  # TFG208
        self.late = layers.Dense(1)  # TFG208
        return self.head(self.dense(x)) + self.gate(x) + aux + self.late(x)

    def train_step(self, data):
        x, y = data
        tracker = keras.metrics.Mean(name="loss")  # TFG208
        tracker.update_state(self.compute_loss(x, y, self(x)))
        return {"loss": tracker.result()}


def eager_setup():
    model = keras.Sequential([layers.Dense(4)])
    model(tf.ones([1, 3]))
    return model, keras.optimizers.Adam()


def escape(x):
    def body(t):
        return keras.layers.Dense(2)(t)  # eager, inside py_function

    return tf.py_function(body, [x], tf.float32)


@tf.function
def guarded(x):
    if tf.executing_eagerly():
        x = layers.Dense(2)(x)
    return x


class Dense:  # a project class that happens to share the name
    def __init__(self, units):
        self.units = units

    def __call__(self, x):
        return x


@tf.function
def shadowed(x):
    return Dense(4)(x)


ds = tf.data.Dataset.range(4).map(lambda i: keras.layers.Dense(1)(tf.reshape(tf.cast(i, tf.float32), [1, 1])))  # TFG208
