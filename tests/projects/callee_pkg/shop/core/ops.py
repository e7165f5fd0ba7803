"""Helpers with no TensorFlow import of their own: traced only through their callers."""

import logging
import random
import time

log = logging.getLogger(__name__)
_seen = []


def normalize(x):
    print("normalizing", x)  # TFG101
    return x / 255.0


def scale_and_log(x, factor):
    log.info("scaling by %s", factor)  # TFG107
    return _jitter(x) * factor


def _jitter(x):
    # Reached from scale_and_log(): the chain crosses one file, then continues here.
    return x + random.random()  # TFG103


def stamp(x):
    # Only ever called from eager code: not traced, never reported.
    print("stamping at", time.time())
    return x


def record(x):
    _seen.append(x)  # TFG102
    return x


def same_name(x):
    print("ops.same_name is called eagerly only")
    return x
