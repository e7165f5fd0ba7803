"""TFG107/TFG108 cases."""
import json
import logging
import logging as pylog
import os
import pickle
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import tensorflow as tf
from absl import logging as absl_logging

LOG = logging.getLogger(__name__)
log = pylog.getLogger("x")


class Trainer(tf.Module):
    def __init__(self):
        self.logger = logging.getLogger("trainer")
        self.out = open("metrics.txt", "w")

    @tf.function
    def step(self, x):
        self.logger.info("step")  # TFG107
        self.out.write("x")  # TFG108
        return x


@tf.function
def traced(x, path):
    logging.warning("w")  # TFG107
    pylog.error("e")  # TFG107
    LOG.info("i")  # TFG107
    log.debug("d")  # TFG107
    absl_logging.info("absl")  # TFG107
    tf.get_logger().info("tf logger")  # TFG107
    warnings.warn("careful")  # TFG107
    tf.compat.v1.logging.info("v1")  # TFG107
    name = input("name? ")  # TFG108
    with open(path, "w") as fh:  # TFG108
        fh.write("data")  # TFG108
        json.dump({}, fh)  # TFG108
        pickle.dump(x, fh)  # TFG108
    np.save("x.npy", x)  # TFG108, TFG204
    os.makedirs("out")  # TFG108
    shutil.rmtree("tmp")  # TFG108
    sys.stdout.write("hi")  # TFG108
    Path("a.txt").write_text("t")  # TFG108
    tf.io.gfile.makedirs("gs://bucket/dir")  # TFG108
    tf.io.write_file(path, tf.strings.as_string(x))
    ta = tf.TensorArray(tf.float32, size=1)
    ta = ta.write(0, x)
    tf.summary.scalar("loss", x, step=0)
    return ta.stack(), name


def eager(x):
    logging.info("fine")
    LOG.warning("fine")
    with open("f", "w") as fh:
        fh.write("fine")
    np.save("x.npy", x)
