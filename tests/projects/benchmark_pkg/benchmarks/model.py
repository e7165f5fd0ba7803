"""The model under benchmark: tf.functions other modules import and time."""

import tensorflow as tf

W = tf.Variable(tf.random.normal([256, 256]))


@tf.function
def train_step(x):
    return tf.reduce_mean(tf.nn.relu(tf.matmul(x, W)))


@tf.function(jit_compile=True)
def xla_step(x):  # TFG304
    return tf.reduce_sum(tf.nn.relu(tf.matmul(x, W)), axis=-1)


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None, 256], tf.float32)])
def serve(x):  # TFG304
    return tf.nn.softmax(tf.matmul(x, W))


@tf.function
def embed(x):
    return tf.math.l2_normalize(tf.matmul(x, W), axis=-1)


def eager_step(x):
    return tf.reduce_mean(tf.nn.relu(tf.matmul(x, W)))
