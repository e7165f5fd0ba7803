import tensorflow as tf

from shop.data import augment as aug
from shop.data.augment import decode_eagerly


def make_dataset(paths):
    ds = tf.data.Dataset.from_tensor_slices(paths)
    ds = ds.map(lambda p: tf.py_function(decode_eagerly, [p], tf.string))
    return ds.map(aug.augment)
