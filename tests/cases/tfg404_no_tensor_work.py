"""TFG404: @tf.function on a body that builds no TensorFlow op."""

import functools
import math

import tensorflow
import tensorflow as tf
from tensorflow import function
from tensorflow import function as tf_function

SCALE = tf.Variable(2.0)
FACTOR = 3


@tf.function
def warmup_schedule(step=0, warmup=100):  # TFG404
    return min(1.0, (step + 1) / warmup)


@tensorflow.function(jit_compile=True)
def layer_sizes(depth=3):  # TFG404
    sizes = [2**i for i in range(depth)]
    return {"sizes": sizes, "total": sum(sizes)}


@function
def count(n=10):  # TFG404
    total = 0
    for i in range(n):
        if i % 2:
            total += i
    return total


@tf_function(reduce_retracing=True)
def greeting(name="world"):  # TFG404
    return f"hello {name}"


@tf.function()
def constant_answer():  # TFG404
    answer = 42
    return answer


class Schedules(tf.Module):
    @tf.function
    def ratio(self, a=1, b=2):  # TFG404
        return a / b


# Near misses: some tensor work (or unknown work) in the body.
@tf.function
def add_one(x):  # tiny, but no traced caller: not TFG401
    return x + 1  # an op on a tensor argument


@tf.function
def identity(x):
    return x  # a tensor argument passed through: left alone


@tf.function
def only_print(x):
    tf.print(x)


@tf.function
def uses_global_variable():
    return SCALE * 2  # a module-level tf.Variable


@tf.function
def uses_global_constant():
    return FACTOR * 2  # a global: not proven to be Python


def helper(n):
    return n + 1


@tf.function
def calls_helper(n=3):
    return helper(n)


@tf.function
def calls_math(n=3):
    return math.sqrt(n)  # attribute call: unknown


@tf.function
def python_loop_over_tensor(x, n=3):
    for _ in range(n):
        x = x * 2
    return x


@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def signed(x):
    return x


@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def signed_default(x=1.0):
    return x + 1  # the signature makes x a tensor


@tf.function
def tensor_annotated(x: tf.Tensor = None):
    return x


@tf.function
def builtin_on_tensor(x):
    return abs(x)


@tf.function
def nested_function(n=2):
    def inner():
        return n

    return inner()


@tf.function
def uses_lambda(n=2):
    return (lambda: n)()


@tf.function
def raises(n=2):
    raise ValueError(n)


@tf.function
def stub():
    pass


@tf.function
def documented_stub():
    """To be implemented."""
    ...


@tf.function
def star_args(*args):
    return len(args)


@tf.function
def kwargs_only(**kwargs):
    return len(kwargs)


# A module constant assigned once is as plain as a literal default.
@tf.function
def default_from_global(n=FACTOR):  # TFG404
    return n + 1


@tf.function
def with_block(n=2):
    with open("x") as fh:  # TFG108
        return n


@tf.function
def shadowed_min(n=3, min=tf.minimum):
    return min(n, 2)


@functools.lru_cache
def not_traced(n=3):
    return n + 1


def eager(n=3):
    return n + 1


wrapped = tf.function(lambda n=3: n + 1)  # not a decorator form


class Model(tf.keras.Model):
    def call(self, inputs):
        return 1


SPEC_DEFAULT = tf.TensorSpec([None])
REBOUND = 1
REBOUND = 2


@tf.function
def default_from_tensor_global(spec=SPEC_DEFAULT):
    return spec


@tf.function
def default_from_rebound_global(n=REBOUND):
    return n + 1
