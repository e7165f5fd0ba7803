"""A servable tf.Module and the tf.functions that export.py saves."""

import tensorflow as tf

FEATURES = [tf.TensorSpec(shape=[None, 3], dtype=tf.float32, name="features")]


class Servable(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.ones([3, 2]))

    @tf.function
    def serve(self, features):  # TFG301
        return tf.matmul(features, self.w)

    @tf.function
    def predict(self, features):  # TFG301
        # Saved by export.py outside its signatures=: only traced shapes survive.
        return tf.argmax(tf.matmul(features, self.w), axis=-1)

    @tf.function(input_signature=FEATURES)
    def scores(self, features):
        return tf.nn.softmax(tf.matmul(features, self.w))


@tf.function(input_signature=FEATURES)
def classify(features):
    return tf.argmax(features, axis=-1)


# export.py passes it in signatures= without specs.
@tf.function
def embed(tokens):  # TFG301
    return tf.strings.to_hash_bucket_fast(tokens, 1000)


@tf.function
def serving_tokens(tokens):  # TFG301
    return tf.strings.length(tokens)


@tf.function
def train_step(features):
    return tf.reduce_sum(features)
