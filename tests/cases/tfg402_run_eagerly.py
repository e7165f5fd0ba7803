"""TFG402: run_functions_eagerly(True) outside tests (this file is not a test file)."""

import tensorflow
import tensorflow as tf
import tensorflow.compat.v1 as tf1
from tensorflow import config
from tensorflow.config import experimental_run_functions_eagerly
from tensorflow.config import run_functions_eagerly as eager

tf.config.run_functions_eagerly(True)  # TFG402
tensorflow.config.run_functions_eagerly(True)  # TFG402
config.run_functions_eagerly(run_eagerly=True)  # TFG402
eager(True)  # TFG402
experimental_run_functions_eagerly(True)  # TFG402
tf.config.experimental_run_functions_eagerly(True)  # TFG402
tf1.config.experimental_run_functions_eagerly(True)  # TFG402


def debug_mode():
    tf.config.run_functions_eagerly(True)  # TFG402


class Trainer:
    def __init__(self, debug):
        if debug:
            tf.config.run_functions_eagerly(True)  # TFG402


# Near misses: turning it off, non-literal values, queries, other libraries.
tf.config.run_functions_eagerly(False)
tf.config.run_functions_eagerly(run_eagerly=False)
DEBUG = True
tf.config.run_functions_eagerly(DEBUG)
tf.config.run_functions_eagerly(1)
tf.config.functions_run_eagerly()
flags = {"run_eagerly": True}
tf.config.run_functions_eagerly(**flags)
tf.config.experimental_run_functions_eagerly(False)


def run_functions_eagerly(flag):
    return flag


run_functions_eagerly(True)  # a local function of the same name


class Settings:
    def run_functions_eagerly(self, flag):
        return flag


Settings().run_functions_eagerly(True)
model = tf.keras.Model()
model.compile(run_eagerly=True)  # Keras' own switch, per model: not this rule
