"""Custom training loop for a small MNIST convnet with step-wise LR decay."""
import logging
import time

import numpy as np
import tensorflow as tf

logger = logging.getLogger(__name__)

BATCH_SIZE = 128
NUM_EPOCHS = 5
LEARNING_RATE = 0.05
LR_DECAY = 0.5

step_losses = []


def load_mnist():
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    x_train = (x_train.astype(np.float32) / 255.0)[..., None]
    x_test = (x_test.astype(np.float32) / 255.0)[..., None]
    print("train:", x_train.shape, "test:", x_test.shape)
    train_ds = (
        tf.data.Dataset.from_tensor_slices((x_train, y_train))
        .shuffle(10_000)
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )
    test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(BATCH_SIZE)
    return train_ds, test_ds


def build_model():
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, 3, activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10),
    ])


model = build_model()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_acc = tf.keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(images, labels):
    start = time.time()  # TFG104
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    for var, grad in zip(model.trainable_variables, grads):
        var.assign_sub(LEARNING_RATE * grad)  # TFG109
    train_acc.update_state(labels, logits)
    step_losses.append(loss)  # TFG102
    print("step took", time.time() - start)  # TFG101, TFG104
    return loss


@tf.function
def eval_step(images, labels):
    logits = model(images, training=False)
    tf.print("eval batch loss:", loss_fn(labels, logits))
    predicted = tf.argmax(logits, axis=-1, output_type=tf.int32)
    hits = tf.equal(predicted, tf.cast(labels, tf.int32))
    return tf.reduce_sum(tf.cast(hits, tf.float32))


def decay_learning_rate():
    global LEARNING_RATE
    LEARNING_RATE *= LR_DECAY
    logger.info("learning rate now %g", LEARNING_RATE)


def train():
    train_ds, test_ds = load_mnist()
    for epoch in range(NUM_EPOCHS):
        t0 = time.time()
        train_acc.reset_state()
        epoch_losses = []
        for images, labels in train_ds:
            epoch_losses.append(float(train_step(images, labels)))
        correct = 0.0
        for images, labels in test_ds:
            correct += float(eval_step(images, labels))
        logger.info(
            "epoch %d loss %.4f acc %.4f (%.1fs)",
            epoch,
            np.mean(epoch_losses),
            float(train_acc.result()),
            time.time() - t0,
        )
        print(f"epoch {epoch}: test accuracy {correct / 10000:.4f}")
        decay_learning_rate()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    train()
