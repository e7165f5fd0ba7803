import tensorflow as tf


@tf.function
def train_step(x, lr):
    return tf.reduce_sum(tf.square(x)) * lr


def _evaluate(x, k):
    return tf.reduce_mean(tf.square(x)) + tf.cast(k, tf.float32)


eval_step = tf.function(_evaluate)


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)])
def signed_step(x, epoch):
    return tf.reduce_sum(tf.square(x)) * tf.cast(epoch, tf.float32)


def plain_step(x, epoch):  # not a tf.function
    return x * epoch
