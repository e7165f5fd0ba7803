"""Synchronous data-parallel ResNet training with MirroredStrategy."""
import os
import time

import tensorflow as tf
from absl import app, flags, logging

FLAGS = flags.FLAGS
flags.DEFINE_integer("epochs", 10, "Number of epochs.")
flags.DEFINE_string("data_dir", "/data/imagenet64", "TFRecord directory.")

PER_REPLICA_BATCH = 64
strategy = tf.distribute.MirroredStrategy()
GLOBAL_BATCH = PER_REPLICA_BATCH * strategy.num_replicas_in_sync
global_step = 0

with strategy.scope():
    model = tf.keras.applications.ResNet50(weights=None, classes=100, input_shape=(64, 64, 3))
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_obj = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE
    )
    train_loss = tf.keras.metrics.Mean("train_loss")
    eval_acc = tf.keras.metrics.SparseCategoricalAccuracy("eval_accuracy")


def preprocess(record):
    parsed = tf.io.parse_single_example(
        record,
        {
            "image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64),
        },
    )
    image = tf.io.decode_jpeg(parsed["image"], channels=3)
    image = tf.image.convert_image_dtype(image, tf.float32)
    return tf.image.resize(image, (64, 64)), parsed["label"]


def make_dataset(pattern):
    ds = tf.data.TFRecordDataset(tf.io.gfile.glob(pattern))
    ds = ds.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.shuffle(8192).batch(GLOBAL_BATCH).prefetch(tf.data.AUTOTUNE)


def compute_loss(labels, logits):
    per_example = loss_obj(labels, logits)
    return tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)


def replica_step(images, labels):
    global global_step
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = compute_loss(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_loss.update_state(loss)
    global_step += 1  # TFG105
    if os.getenv("DEBUG_REPLICAS"):  # TFG104
        logging.info("replica step traced on %s", images.device)  # TFG107
    return loss


@tf.function
def distributed_train_step(images, labels):
    per_replica_losses = strategy.run(replica_step, args=(images, labels))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)


@tf.function
def distributed_eval_step(images, labels):
    def replica_eval(x, y):
        eval_acc.update_state(y, model(x, training=False))

    strategy.run(replica_eval, args=(images, labels))
    tf.summary.scalar("eval/global_step", global_step, step=optimizer.iterations)  # TFG109


def main(argv):
    del argv
    train_dist = strategy.experimental_distribute_dataset(
        make_dataset(os.path.join(FLAGS.data_dir, "train-*"))
    )
    eval_dist = strategy.experimental_distribute_dataset(
        make_dataset(os.path.join(FLAGS.data_dir, "val-*"))
    )
    writer = tf.summary.create_file_writer(os.path.join("logs", time.strftime("%Y%m%d-%H%M%S")))
    with writer.as_default():
        for epoch in range(FLAGS.epochs):
            start = time.time()
            train_loss.reset_state()
            eval_acc.reset_state()
            for images, labels in train_dist:
                distributed_train_step(images, labels)
            for images, labels in eval_dist:
                distributed_eval_step(images, labels)
            logging.info(
                "epoch %d: loss=%.4f eval_acc=%.4f (%.0fs)",
                epoch,
                train_loss.result(),
                eval_acc.result(),
                time.time() - start,
            )
            print(f"finished epoch {epoch}")


if __name__ == "__main__":
    app.run(main)
