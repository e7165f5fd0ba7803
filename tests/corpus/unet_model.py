"""Small U-Net for binary segmentation, trained with model.fit."""
import logging
import os
from datetime import datetime

import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

IMAGE_SHAPE = (128, 128, 3)


class ConvBlock(layers.Layer):
    def __init__(self, filters, **kwargs):
        super().__init__(**kwargs)
        self.filters = filters
        self.conv1 = layers.Conv2D(filters, 3, padding="same", use_bias=False)
        self.bn1 = layers.BatchNormalization()
        self.conv2 = layers.Conv2D(filters, 3, padding="same", use_bias=False)
        self.bn2 = layers.BatchNormalization()

    def call(self, x, training=False):
        x = tf.nn.relu(self.bn1(self.conv1(x), training=training))
        return tf.nn.relu(self.bn2(self.conv2(x), training=training))


class UNet(keras.Model):
    def __init__(self, widths=(32, 64, 128, 256), **kwargs):
        super().__init__(**kwargs)
        self.down = [ConvBlock(w) for w in widths[:-1]]
        self.bottleneck = ConvBlock(widths[-1])
        self.up = [layers.Conv2DTranspose(w, 2, strides=2) for w in reversed(widths[:-1])]
        self.up_blocks = [ConvBlock(w) for w in reversed(widths[:-1])]
        self.head = layers.Conv2D(1, 1)

    def call(self, x, training=False):
        skips = []
        for block in self.down:
            x = block(x, training=training)
            skips.append(x)
            x = tf.nn.max_pool2d(x, 2, 2, "VALID")
        x = self.bottleneck(x, training=training)
        for up, block in zip(self.up, self.up_blocks):
            x = up(x)
            x = tf.concat([x, skips.pop()], axis=-1)
            x = block(x, training=training)
        return self.head(x)


def dice_coefficient(y_true, y_pred, smooth=1.0):
    y_pred = tf.sigmoid(y_pred)
    y_true = tf.cast(y_true, y_pred.dtype)
    inter = tf.reduce_sum(y_true * y_pred, axis=(1, 2, 3))
    union = tf.reduce_sum(y_true + y_pred, axis=(1, 2, 3))
    return tf.reduce_mean((2.0 * inter + smooth) / (union + smooth))


@tf.function
def predict_masks(model, images, threshold=0.5, print=tf.print):
    probs = tf.sigmoid(model(images, training=False))
    print("mean foreground probability:", tf.reduce_mean(probs))
    return tf.cast(probs > threshold, tf.uint8)


def train(train_ds, val_ds, epochs=40):
    run_dir = os.path.join("runs", datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(run_dir, exist_ok=True)
    model = UNet()
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[dice_coefficient],
    )
    model.fit(
        train_ds,
        validation_data=val_ds,
        epochs=epochs,
        callbacks=[
            keras.callbacks.ModelCheckpoint(os.path.join(run_dir, "best.weights.h5"),
                                            save_best_only=True, save_weights_only=True),
            keras.callbacks.TensorBoard(run_dir),
        ],
    )
    logging.info("training finished, artifacts in %s", run_dir)
    print("best checkpoint:", os.path.join(run_dir, "best.weights.h5"))
    return model
