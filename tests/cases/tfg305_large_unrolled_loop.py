"""TFG305 large-unrolled-loop: Python loops with a large static count in traced code."""

import tensorflow as tf
from tensorflow import function

STEPS = 1000
TWICE = 500
TWICE = 600  # rebound: not a constant
BUMPED = 300
BUMPED += 1  # rebound: not a constant
RUNTIME = 400
SMALL = 100
FLOAT = 1000.0


def bump():
    global RUNTIME
    RUNTIME = 5  # another binding of RUNTIME: not a constant


@tf.function
def literal(x):
    for i in range(1000):  # TFG305
        x = x + 1.0
    for i in range(101):  # TFG305
        x = x + 1.0
    for i in range(100):  # exactly unroll-max: fine
        x = x + 1.0
    return x


@tf.function
def constants(x):
    for i in range(STEPS):  # TFG305
        x = x + 1.0
    for i in range(-5, 200):  # TFG305
        x = x + 1.0
    for i in range(0, 1000, 2):  # TFG305
        x = x + 1.0
    for i in range(0, 1000, 20):  # 50 iterations: fine
        x = x + 1.0
    for i in range(1000, 0):  # empty
        x = x + 1.0
    for i in range(SMALL):
        x = x + 1.0
    return x


@tf.function
def not_constants(x, n):
    for i in range(TWICE):
        x = x + 1.0
    for i in range(BUMPED):
        x = x + 1.0
    for i in range(RUNTIME):  # TFG109
        x = x + 1.0
    for i in range(n):  # a tensor argument: a tf.while_loop
        x = x + 1.0
    for i in range(tf.shape(x)[0]):
        x = x + 1.0
    for i in tf.range(1000):
        x = x + 1.0
    local = 1000
    for i in range(local):  # a local: not checked
        x = x + 1.0
    return x


@tf.function
def literals(x):
    for v in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100]:  # TFG305
        x = x + v
    for v in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99):  # 100 elements: fine
        x = x + v
    for v in [*range(1000)]:  # starred: count not checked
        x = x + v
    return x


@function(autograph=False)
def autograph_off(x):
    for i in range(STEPS):  # TFG305
        x = x + 1.0
    return x


@tf.function
def eager_branch(x):
    if tf.executing_eagerly():
        for i in range(1000):  # runs only eagerly
            x = x + 1.0
    return x


@tf.function
def shadowed(x, range=tf.range):
    for i in range(1000):  # the parameter, tf.range
        x = x + 1.0
    return x


def eager(x):
    for i in range(1000):  # eager code
        x = x + 1
    return x


def through_py_function(x):
    for i in range(1000):  # runs eagerly inside tf.py_function
        x = x + 1
    return x


@tf.function
def wrapper(x):
    return tf.py_function(through_py_function, [x], tf.float32)


def augment(image):
    for i in range(STEPS):  # TFG305
        image = image * 0.99
    return image


dataset = tf.data.Dataset.from_tensor_slices([1.0, 2.0]).map(augment)
