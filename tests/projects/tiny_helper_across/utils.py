import tensorflow as tf


@tf.function
def normalize(x):  # TFG401
    return tf.math.l2_normalize(x)


@tf.function
def entry_point(x):
    # A tiny tf.function nobody's traced code calls: an entry point, not a helper.
    return tf.math.l2_normalize(x)
