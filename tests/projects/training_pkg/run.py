"""A script beside the package: imports resolve from this directory."""

import tensorflow as tf
from trainpkg.model import train_step

x = tf.ones([4])
step = 0
while step < 10:
    train_step(x, step)  # TFG303
    step += 1
