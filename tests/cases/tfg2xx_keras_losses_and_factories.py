"""Keras hands losses/metrics tensors; datasets built by a project function are datasets."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

EPS = 1e-7


class ClippedCrossEntropy(keras.losses.Loss):
    def call(self, y_true, y_pred):
        probs = np.clip(y_pred, EPS, 1.0 - EPS)  # TFG204
        return -tf.reduce_mean(tf.math.log(tf.gather(probs, tf.cast(y_true, tf.int32), batch_dims=1)))


class Accuracy(keras.metrics.Metric):
    def __init__(self):
        super().__init__(name="acc")
        self.total = self.add_weight(name="total", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        hits = tf.cast(tf.equal(y_true, tf.argmax(y_pred, -1)), tf.float32)
        self.total.assign_add(tf.reduce_sum(hits))

    def result(self):
        return self.total.numpy()  # result() runs eagerly: not traced


def mse_loss(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred)) + y_pred.numpy().sum()  # TFG202


def base_dataset():
    return tf.data.TextLineDataset("lines.txt")


def normalise(text):
    return bool(tf.strings.length(text) > 0)  # TFG201


def pipeline():
    return base_dataset().filter(normalise)


def other_mapper(rows):
    return rows.numpy()


def not_a_dataset():
    return [1, 2, 3]


model = keras.Sequential([keras.layers.Dense(1)])
model.compile(optimizer="adam", loss=mse_loss)
