import tensorflow as tf


@tf.function
def train_step(x, lr):
    return tf.reduce_sum(tf.square(x)) * lr
