"""Denoising autoencoder on MNIST (legacy script using the tf2 alias)."""
import os
import pickle
import random

import tensorflow as tf2
from tensorflow import function

CHECKPOINT_DIR = "checkpoints/dae"
NOISE_LEVELS = (0.0, 0.05, 0.1, 0.2)
sparsity_weight = 0.1


def build_autoencoder(dim=784, code=32):
    inputs = tf2.keras.Input((dim,))
    hidden = tf2.keras.layers.Dense(256, activation="relu")(inputs)
    encoded = tf2.keras.layers.Dense(code, activation="relu", name="code")(hidden)
    hidden = tf2.keras.layers.Dense(256, activation="relu")(encoded)
    outputs = tf2.keras.layers.Dense(dim, activation="sigmoid")(hidden)
    return tf2.keras.Model(inputs, outputs)


autoencoder = build_autoencoder()
encoder = tf2.keras.Model(autoencoder.input, autoencoder.get_layer("code").output)
opt = tf2.keras.optimizers.Adam(1e-3)


@function
def corrupt(x):
    level = random.choice(NOISE_LEVELS)  # TFG103
    return tf2.clip_by_value(x + level * tf2.random.normal(tf2.shape(x)), 0.0, 1.0)


def _save_run_config():
    os.makedirs(CHECKPOINT_DIR, exist_ok=True)  # TFG108
    with open(os.path.join(CHECKPOINT_DIR, "config.pkl"), "wb") as f:  # TFG108
        pickle.dump({"noise_levels": NOISE_LEVELS}, f)  # TFG108


def _train_one(x):
    noisy = corrupt(x)
    with tf2.GradientTape() as tape:
        codes = encoder(noisy, training=True)
        recon = autoencoder(noisy, training=True)
        mse = tf2.reduce_mean(tf2.square(recon - x))
        loss = mse + sparsity_weight * tf2.reduce_mean(tf2.abs(codes))  # TFG109
    grads = tape.gradient(loss, autoencoder.trainable_variables)
    opt.apply_gradients(zip(grads, autoencoder.trainable_variables))
    _save_run_config()
    return loss


train_step = tf2.function(_train_one)
encode = tf2.compat.v2.function(lambda x: encoder(x, training=False))


if __name__ == "__main__":
    (x_train, _), _ = tf2.keras.datasets.mnist.load_data()
    x_train = x_train.reshape(-1, 784).astype("float32") / 255.0
    ds = tf2.data.Dataset.from_tensor_slices(x_train).shuffle(60000).batch(256)
    for epoch in range(10):
        if epoch == 5:
            sparsity_weight = 0.01
        for batch in ds:
            loss = train_step(batch)
        print("epoch", epoch, "loss", float(loss))
    codes = encode(x_train[:1000])
    print("code sparsity:", float(tf2.reduce_mean(tf2.cast(codes > 0, tf2.float32))))
