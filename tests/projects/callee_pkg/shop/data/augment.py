"""A Dataset.map callback defined here and handed to the pipeline in pipeline.py."""

import numpy as np


def augment(image, label):
    flip = np.random.rand() > 0.5  # TFG103
    return image, label


def decode_eagerly(path):
    # Handed to tf.py_function in pipeline.py: runs eagerly on every element.
    print("decoding", path)
    return path


def same_name(x):
    print("augment.same_name runs while tracing")  # TFG101
    return x
