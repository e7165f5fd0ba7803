"""TFG403: timeit around the first call of a tf.function."""

import timeit
import timeit as ti
from timeit import Timer
from timeit import repeat as timeit_repeat

import tensorflow as tf
from tensorflow import function

images = tf.random.normal([8, 32, 32, 3])
kernel = tf.random.normal([3, 3, 3, 16])


@tf.function
def conv(images):
    return tf.nn.conv2d(images, kernel, strides=1, padding="SAME")


@function(jit_compile=True)
def pool(images):
    return tf.nn.max_pool2d(images, ksize=2, strides=2, padding="VALID")


@tf.function
def relu(images):
    return tf.nn.relu(tf.nn.bias_add(images, tf.zeros([3])))


@tf.function
def tanh(images):
    return tf.math.tanh(tf.nn.bias_add(images, tf.zeros([3])))


@tf.function
def sigmoid(images):
    return tf.math.sigmoid(tf.nn.bias_add(images, tf.zeros([3])))


def conv_eager(images):
    return tf.nn.conv2d(images, kernel, strides=1, padding="SAME")


print("eager:", timeit.timeit(lambda: conv_eager(images), number=10))
print("graph:", timeit.timeit(lambda: conv(images), number=10))  # TFG403
print(ti.repeat(lambda: pool(images), repeat=3, number=10))  # TFG403
print(timeit_repeat("relu(images)", globals=globals(), number=10))  # TFG403
print(Timer(lambda: tanh(images)).timeit(number=10))  # TFG403

# Near misses.
print(timeit.timeit(lambda: pool(images), number=10))  # pool was called above
print(timeit.timeit(lambda: sigmoid(images), setup=lambda: sigmoid(images), number=10))
print(timeit.timeit("sigmoid(images)", setup="sigmoid(images)", globals=globals(), number=5))
print(timeit.timeit("conv_eager(images)", globals=globals(), number=10))  # not a tf.function


def compare_layers(layer, batch):
    # `layer` is a parameter: whether it is a fresh tf.function is unknown.
    return timeit.timeit(lambda: layer(batch), number=10)
