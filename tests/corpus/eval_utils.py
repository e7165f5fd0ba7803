"""Evaluation helpers shared by the classification training scripts."""
import logging

import numpy as np
import tensorflow as tf
from tensorflow import keras

from vision_ops import random  # project augmentation ops, not the stdlib module

log = logging.getLogger(__name__)


class StreamingAccuracy(keras.metrics.Metric):
    def __init__(self, name="streaming_accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.correct = self.add_weight(name="correct", initializer="zeros")
        self.total = self.add_weight(name="total", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        predicted = tf.argmax(y_pred, axis=-1, output_type=tf.int64)
        matches = tf.cast(tf.equal(predicted, tf.cast(y_true, tf.int64)), tf.float32)
        self.correct.assign_add(tf.reduce_sum(matches))
        self.total.assign_add(tf.cast(tf.size(matches), tf.float32))

    def result(self):
        value = tf.math.divide_no_nan(self.correct, self.total)
        log.debug("streaming accuracy %s", value)
        return value


class RunningMean(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.mean = None
        self.count = tf.Variable(0.0, trainable=False)

    @tf.function
    def __call__(self, x):
        if self.mean is None:
            self.mean = tf.Variable(tf.zeros(x.shape[1:]), trainable=False)
        n = tf.cast(tf.shape(x)[0], tf.float32)
        self.count.assign_add(n)
        self.mean.assign_add((tf.reduce_sum(x, axis=0) - n * self.mean) / self.count)
        return self.mean.read_value()


@tf.function
def tta_predict(model, images):
    views = [images, tf.image.flip_left_right(images), random.jitter(images, 0.05)]
    preds = [tf.nn.softmax(model(v, training=False)) for v in views]
    return tf.reduce_mean(tf.stack(preds), axis=0)


class ShapeCheckModel(keras.Model):
    """Debug wrapper; always compiled with run_eagerly=True (see build_debug_model)."""

    def __init__(self, inner, **kwargs):
        super().__init__(**kwargs)
        self.inner = inner
        self.steps_run = 0

    def call(self, x, training=False):
        return self.inner(x, training=training)

    def train_step(self, data):
        x, y = data
        print("batch shapes:", x.shape, y.shape, "step", self.steps_run)
        self.steps_run += 1
        return super().train_step(data)


def build_debug_model(inner):
    model = ShapeCheckModel(inner)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", run_eagerly=True)
    return model


def evaluate(model, ds, class_names):
    y_true, y_pred = [], []
    for images, labels in ds:
        y_pred.append(np.argmax(tta_predict(model, images).numpy(), axis=-1))
        y_true.append(labels.numpy())
    cm = tf.math.confusion_matrix(np.concatenate(y_true), np.concatenate(y_pred))
    per_class = np.diag(cm.numpy()) / np.maximum(cm.numpy().sum(axis=1), 1)
    for name, acc in zip(class_names, per_class):
        log.info("%-12s %.3f", name, acc)
    print(cm.numpy())
    return per_class
