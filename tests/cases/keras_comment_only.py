"""A comment or docstring mentioning run_eagerly=True does not switch tracing off."""
import tensorflow as tf


class Net(tf.keras.Model):
    """Pass run_eagerly=True to compile() to debug this model."""

    def train_step(self, data):
        print("step")  # TFG101
        return {}
