"""Image-folder input pipeline with random augmentation for a 3-class classifier."""
import functools
import glob
import logging
import os
import random

import numpy as np
import tensorflow as tf
from PIL import Image

IMG_SIZE = 224
AUTOTUNE = tf.data.AUTOTUNE
CLASS_NAMES = ("cat", "dog", "fox")

log = logging.getLogger("augment")


def list_files(root, seed=0):
    files = sorted(glob.glob(os.path.join(root, "*", "*.jpg")))
    random.Random(seed).shuffle(files)
    labels = [CLASS_NAMES.index(os.path.basename(os.path.dirname(f))) for f in files]
    log.info("found %d files under %s", len(files), root)
    return files, labels


def _load_with_pil(path):
    # Runs eagerly through tf.numpy_function, once per element.
    img = Image.open(path.decode("utf-8")).convert("RGB")
    if np.random.rand() < 0.1:
        print("simulating a low-resolution upload:", path)
        img = img.resize((IMG_SIZE // 2, IMG_SIZE // 2))
    return np.asarray(img.resize((IMG_SIZE, IMG_SIZE)), dtype=np.float32)


def _decode(path, label):
    image = tf.numpy_function(_load_with_pil, [path], tf.float32)
    image.set_shape((IMG_SIZE, IMG_SIZE, 3))
    return image, label


def _keep_example(image, label):
    log.debug("filter traced for label dtype %s", label.dtype)  # TFG107
    return tf.logical_and(label >= 0, label < len(CLASS_NAMES))


def _debug_stats(image):
    print("image dtype", image.dtype, "shape", image.shape)  # TFG101
    return image


def _normalize(image):
    image = _debug_stats(image)
    return image / 127.5 - 1.0


def _augment(image, label, max_delta=0.2, min_crop=0.8):
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta)
    crop = int(IMG_SIZE * random.uniform(min_crop, 1.0))  # TFG103
    image = tf.image.random_crop(image, (crop, crop, 3))
    image = tf.image.resize(image, (IMG_SIZE, IMG_SIZE))
    return image, label


def make_dataset(root, batch_size=32, training=True):
    files, labels = list_files(root)
    ds = tf.data.Dataset.from_tensor_slices((files, labels))
    if training:
        ds = ds.shuffle(len(files), reshuffle_each_iteration=True)
    ds = ds.map(_decode, num_parallel_calls=AUTOTUNE)
    ds = ds.filter(_keep_example)
    if training:
        ds = ds.map(functools.partial(_augment, max_delta=0.3), num_parallel_calls=AUTOTUNE)
    ds = ds.map(lambda x, y: (_normalize(x), tf.one_hot(y, len(CLASS_NAMES))))
    return ds.batch(batch_size).prefetch(AUTOTUNE)


def synthetic_dataset(n=256):
    """Random images for smoke tests; the generator body runs in Python."""

    def gen():
        for _ in range(n):
            label = random.randrange(len(CLASS_NAMES))
            image = np.random.uniform(0, 255, (IMG_SIZE, IMG_SIZE, 3)).astype(np.float32)
            yield image, label

    return tf.data.Dataset.from_generator(
        gen,
        output_signature=(
            tf.TensorSpec((IMG_SIZE, IMG_SIZE, 3), tf.float32),
            tf.TensorSpec((), tf.int32),
        ),
    )


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    for images, labels in make_dataset("data/train").take(2):
        print(images.shape, labels.shape)
