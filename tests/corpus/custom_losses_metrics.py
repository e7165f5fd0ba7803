"""Losses and metrics for imbalanced multi-label tagging."""
import logging
import warnings

import tensorflow as tf
from tensorflow import keras


class FocalLoss(keras.losses.Loss):
    def __init__(self, gamma=2.0, alpha=0.25, name="focal_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        if gamma > 5:
            warnings.warn("very large gamma; training may stall")
        self.gamma = gamma
        self.alpha = alpha

    def call(self, y_true, y_pred):
        y_true = tf.cast(y_true, y_pred.dtype)
        if self.gamma == 0:
            warnings.warn("FocalLoss with gamma=0 is plain cross-entropy")  # TFG107
        p = tf.sigmoid(y_pred)
        ce = tf.nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
        p_t = y_true * p + (1.0 - y_true) * (1.0 - p)
        alpha_t = y_true * self.alpha + (1.0 - y_true) * (1.0 - self.alpha)
        return tf.reduce_sum(alpha_t * tf.pow(1.0 - p_t, self.gamma) * ce, axis=-1)

    def get_config(self):
        return {**super().get_config(), "gamma": self.gamma, "alpha": self.alpha}


class MacroF1(keras.metrics.Metric):
    def __init__(self, num_classes, threshold=0.5, name="macro_f1", **kwargs):
        super().__init__(name=name, **kwargs)
        self.num_classes = num_classes
        self.threshold = threshold
        self.tp = self.add_weight(name="tp", shape=(num_classes,), initializer="zeros")
        self.fp = self.add_weight(name="fp", shape=(num_classes,), initializer="zeros")
        self.fn = self.add_weight(name="fn", shape=(num_classes,), initializer="zeros")
        self.num_batches = 0

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = tf.cast(tf.sigmoid(y_pred) > self.threshold, tf.float32)
        y_true = tf.cast(y_true, tf.float32)
        self.tp.assign_add(tf.reduce_sum(y_true * y_pred, axis=0))
        self.fp.assign_add(tf.reduce_sum((1.0 - y_true) * y_pred, axis=0))
        self.fn.assign_add(tf.reduce_sum(y_true * (1.0 - y_pred), axis=0))
        self.num_batches += 1  # TFG106

    def result(self):
        if self.num_batches == 0:
            logging.warning("MacroF1.result() called before any update_state()")
        precision = tf.math.divide_no_nan(self.tp, self.tp + self.fp)
        recall = tf.math.divide_no_nan(self.tp, self.tp + self.fn)
        f1 = tf.math.divide_no_nan(2.0 * precision * recall, precision + recall)
        return tf.reduce_mean(f1)

    def reset_state(self):
        for v in self.variables:
            v.assign(tf.zeros_like(v))
        self.num_batches = 0


def weighted_bce(y_true, y_pred):
    print("tracing weighted_bce for", y_pred.shape)  # TFG101
    y_true = tf.cast(y_true, y_pred.dtype)
    per_label = tf.nn.weighted_cross_entropy_with_logits(y_true, y_pred, pos_weight=3.0)
    return tf.reduce_mean(per_label, axis=-1)


def positive_rate(y_true, y_pred):
    logging.debug("positive_rate traced")  # TFG107
    return tf.reduce_mean(tf.cast(y_pred > 0.0, tf.float32))


def build_and_compile(num_features, num_classes, use_focal=False):
    model = keras.Sequential(
        [
            keras.Input(shape=(num_features,)),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dropout(0.3),
            keras.layers.Dense(num_classes),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(3e-4),
        loss=FocalLoss(gamma=2.0) if use_focal else weighted_bce,
        metrics=[positive_rate, MacroF1(num_classes)],
    )
    return model


def report(model, dataset):
    results = model.evaluate(dataset, return_dict=True, verbose=0)
    for name, value in sorted(results.items()):
        print(f"{name:>16s}: {value:.4f}")
    logging.info("evaluation finished")
    return results
