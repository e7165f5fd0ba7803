"""DCGAN on 32x32 face crops, trained with model.fit and a custom train_step."""
import os

import numpy as np
import tensorflow as tf
from tensorflow import keras

LATENT_DIM = 128


def make_generator():
    return keras.Sequential(
        [
            keras.Input(shape=(LATENT_DIM,)),
            keras.layers.Dense(8 * 8 * 128),
            keras.layers.Reshape((8, 8, 128)),
            keras.layers.Conv2DTranspose(128, 4, strides=2, padding="same"),
            keras.layers.LeakyReLU(0.2),
            keras.layers.Conv2DTranspose(64, 4, strides=2, padding="same"),
            keras.layers.LeakyReLU(0.2),
            keras.layers.Conv2D(3, 5, padding="same", activation="sigmoid"),
        ],
        name="generator",
    )


def make_discriminator():
    return keras.Sequential(
        [
            keras.Input(shape=(32, 32, 3)),
            keras.layers.Conv2D(64, 4, strides=2, padding="same"),
            keras.layers.LeakyReLU(0.2),
            keras.layers.Conv2D(128, 4, strides=2, padding="same"),
            keras.layers.LeakyReLU(0.2),
            keras.layers.Flatten(),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(1),
        ],
        name="discriminator",
    )


class GAN(keras.Model):
    def __init__(self, discriminator, generator, latent_dim=LATENT_DIM, d_steps=1):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.d_steps = d_steps
        self.batches_seen = 0
        self.gen_loss_tracker = keras.metrics.Mean(name="generator_loss")
        self.disc_loss_tracker = keras.metrics.Mean(name="discriminator_loss")

    @property
    def metrics(self):
        return [self.gen_loss_tracker, self.disc_loss_tracker]

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn

    def train_step(self, real_images):
        batch_size = tf.shape(real_images)[0]
        for _ in range(self.d_steps):
            noise = tf.random.normal((batch_size, self.latent_dim))
            fake = self.generator(noise)
            combined = tf.concat([fake, real_images], axis=0)
            labels = tf.concat([tf.ones((batch_size, 1)), tf.zeros((batch_size, 1))], axis=0)
            labels += 0.05 * tf.random.uniform(tf.shape(labels))
            with tf.GradientTape() as tape:
                d_loss = self.loss_fn(labels, self.discriminator(combined))
            grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
            self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))

        # a shared offset for the whole batch, meant to be re-drawn every step
        offset = np.random.normal(size=(1, self.latent_dim)).astype("float32")  # TFG103
        noise = tf.random.normal((batch_size, self.latent_dim)) + offset
        misleading = tf.zeros((batch_size, 1))
        with tf.GradientTape() as tape:
            g_loss = self.loss_fn(misleading, self.discriminator(self.generator(noise)))
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))

        self.batches_seen += 1  # TFG106
        self.gen_loss_tracker.update_state(g_loss)
        self.disc_loss_tracker.update_state(d_loss)
        return {
            "d_loss": self.disc_loss_tracker.result(),
            "g_loss": self.gen_loss_tracker.result(),
        }


class GANMonitor(keras.callbacks.Callback):
    def __init__(self, num_img=3, latent_dim=LATENT_DIM, out_dir="samples"):
        super().__init__()
        self.num_img = num_img
        self.latent_dim = latent_dim
        self.out_dir = out_dir
        self.epochs_done = 0

    def on_epoch_end(self, epoch, logs=None):
        os.makedirs(self.out_dir, exist_ok=True)
        latent = np.random.normal(size=(self.num_img, self.latent_dim)).astype("float32")
        images = self.model.generator(latent) * 255.0
        for i, img in enumerate(images.numpy()):
            keras.utils.save_img(os.path.join(self.out_dir, f"e{epoch:03d}_{i}.png"), img)
        self.epochs_done += 1
        print(f"epoch {epoch}: d_loss={logs['d_loss']:.4f} g_loss={logs['g_loss']:.4f}")


if __name__ == "__main__":
    faces = keras.utils.image_dataset_from_directory(
        "data/faces", label_mode=None, image_size=(32, 32), batch_size=64
    )
    faces = faces.map(lambda x: x / 255.0)
    gan = GAN(make_discriminator(), make_generator())
    gan.compile(
        d_optimizer=keras.optimizers.Adam(2e-4, beta_1=0.5),
        g_optimizer=keras.optimizers.Adam(2e-4, beta_1=0.5),
        loss_fn=keras.losses.BinaryCrossentropy(from_logits=True),
    )
    gan.fit(faces, epochs=30, callbacks=[GANMonitor(num_img=4)])
