"""TFG301: wrapped serving functions, Keras classes, and shadowed names."""

import tensorflow as tf
from tensorflow import keras

SPEC = [tf.TensorSpec(shape=[None, 8], dtype=tf.float32)]
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])

serving_fn = tf.function(model.call)  # TFG301
serving_ok = tf.function(model.call, input_signature=SPEC)
serving_lambda = tf.function(lambda x: model(x))  # TFG301
serve_model = tf.function(lambda x: model(x))  # not a serving name by default


class Ranker(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)

    def call(self, x):
        return self.dense(x)

    @tf.function
    def serving_rank(self, x):  # TFG301
        return tf.argsort(self(x)[:, 0])

    @tf.function
    def score_batch(self, x):  # a Keras model's method: Keras decides what is saved
        return self(x)


ranker = Ranker()
tf.saved_model.save(ranker, "/tmp/ranker")


class Exporter(tf.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    @tf.function
    def lookup(self, keys):  # TFG301
        return tf.strings.to_hash_bucket_fast(keys, 100)

    def save(self, path):
        tf.saved_model.save(self, path, signatures=None)


def make_serving(tf):
    @tf.function
    def serve(x):  # `tf` is a parameter: not TensorFlow's tf.function
        return x

    return serve


def function(f):
    return f


@function
def serving(x):  # a local decorator named `function`
    return x


def _get_serve_fn(model):
    @tf.function
    def serve(serialized):  # given specs through the factory below (the TFX pattern)
        return model(tf.io.parse_tensor(serialized, tf.float32))

    return serve


def export_examples(model, path):
    examples = tf.TensorSpec(shape=[None], dtype=tf.string, name="examples")
    signatures = {"serving_default": _get_serve_fn(model).get_concrete_function(examples)}
    tf.saved_model.save(model, path, signatures=signatures)
