"""TFG304: jit_compile=True with None dimensions in input_signature."""

import functools

import keras
import tensorflow
import tensorflow as tf
import tensorflow as tf2
from tensorflow import TensorSpec, function

IMAGE_SPEC = [tf.TensorSpec(shape=(None, 28, 28), dtype=tf.float32)]
xla = functools.partial(tf.function, jit_compile=True)
compiled = tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None], tf.float32)])


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec(shape=[None, 28], dtype=tf.float32)])
def dense_logits(x):  # TFG304
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


@tf2.compat.v2.function(experimental_compile=True, input_signature=IMAGE_SPEC)
def flatten_images(images):  # TFG304
    return tf2.reshape(images, [-1, 28 * 28])


@xla(input_signature=[TensorSpec(None, tf.float32)])
def any_rank_sum(x):  # TFG304
    return tf.reduce_sum(x)


@compiled
def scale_vector(v):  # TFG304
    return tf.math.l2_normalize(v)


@function(
    jit_compile=True,
    input_signature=[
        tf.TensorSpec([32, 128], tf.float32),
        tf.TensorSpec(shape=tensorflow.TensorShape([None]), dtype=tf.int32),
    ],
)
def gather_rows(table, ids):  # TFG304
    return tf.gather(table, ids)


class Scorer(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.ones([16, 1]))

    @tf.function(
        jit_compile=True,
        input_signature=[{"dense": tf.TensorSpec([None, 16]), "mask": tf.TensorSpec([8, 16])}],
    )
    def score(self, features):  # TFG304
        return tf.matmul(features["dense"] * features["mask"][:1], self.w)


def _project(x):  # TFG304
    return tf.linalg.matmul(x, tf.transpose(x))


project = tf.function(_project, jit_compile=True, input_signature=[tf.TensorSpec([None, 8])])
square = tf.function(  # TFG304
    lambda x: tf.square(x), [tf.TensorSpec([None, 4])], jit_compile=True
)


# Near misses: fixed shapes, no XLA, unknown settings.
@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([64, 28], tf.float32)])
def fixed_batch(x):
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


@tf.function(input_signature=[tf.TensorSpec([None, 28], tf.float32)])
def serve_any_batch(x):  # no XLA: one graph serves every batch size
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


@tf.function(jit_compile=False, input_signature=[tf.TensorSpec([None, 28], tf.float32)])
def not_compiled(x):
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


def use_xla():
    return False


@tf.function(jit_compile=use_xla(), input_signature=[tf.TensorSpec([None, 28])])
def maybe_compiled(x):  # the flag is not a literal True: left alone
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


@tf.function(jit_compile=True)
def compiled_no_signature(x):  # never called with two shapes here
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec(shape=[], dtype=tf.float32)])
def scalar_step(lr):
    return tf.math.sqrt(lr)


def make_specs(width):
    return [tf.TensorSpec([width, 3])]


@tf.function(jit_compile=True, input_signature=make_specs(4))
def built_specs(x):  # the signature is computed: nothing certain
    return tf.reduce_sum(tf.nn.relu(x), axis=-1)


model = keras.Sequential([keras.layers.Dense(4)])
model.compile(optimizer="adam", loss="mse", jit_compile=True)  # Keras XLA: out of scope
