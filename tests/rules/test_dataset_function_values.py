"""A ``Dataset`` transformation traces its function once and runs the graph for every element,
which gets an element in its positional parameters and the same Python values everywhere else
(``functools.partial`` keywords, values a closure captures).  So a Python value written or
logged there is the same for every element: configuring a decoder object, or logging its
settings, is not a per-call effect (TFG106, TFG107).  Accumulation, tensors and literal-only
messages are still reported."""

from __future__ import annotations

import pytest

from tests.helpers import dedent, expected, found

_CODES = ("TFG106", "TFG107")

_HEADER = """
import functools
import logging

import tensorflow as tf


class Augment:
    def __init__(self, jitter=0.0):
        self.jitter = jitter


class Decoder:
    def __init__(self, size=None, augment=None):
        self.size = size
        self.augment = augment
        self.decoded = 0

    def decode(self, s):
        return tf.image.resize(tf.io.decode_png(s), [self.size, self.size])


def describe(augment, name):
    logging.info("%s jitter: %s", name, augment.jitter)
"""

CASES = {
    "settings handed by functools.partial": """
        def parse(strings, labels, size, decoder):
            if isinstance(decoder, Decoder):
                describe(decoder.augment, "train")
                decoder.size = size
            return decoder.decode(strings), labels


        def pipeline(ds, size):
            return ds.map(functools.partial(parse, size=size, decoder=Decoder()))
    """,
    "settings a closure captures and passes by keyword": """
        def parse(strings, labels, size, decoder):
            if isinstance(decoder, Decoder):
                describe(decoder.augment, "eval")
                decoder.size = size
            return decoder.decode(strings), labels


        def pipeline(ds, size, decoder):
            def to_images(element, source):
                return parse(*element, size=size, decoder=decoder), source

            return ds.map(to_images)
    """,
    "a setting bound by functools.partial is logged as configuration": """
        def augment(image, label, policy):
            logging.info("apply policy %s", policy)
            return tf.image.flip_left_right(image), label


        def pipeline(ds, policy):
            return ds.map(functools.partial(augment, policy=policy))
    """,
    "an element logged is a tensor": """
        def augment(image, label, policy):
            logging.info("label %s", label)  # TFG107
            return tf.image.flip_left_right(image), label


        def pipeline(ds, policy):
            return ds.map(functools.partial(augment, policy=policy))
    """,
    "a count kept on the decoder accumulates": """
        def parse(strings, labels, size, decoder):
            decoder.decoded += 1  # TFG106
            decoder.size = size
            return decoder.decode(strings), labels


        def pipeline(ds, size):
            return ds.map(functools.partial(parse, size=size, decoder=Decoder()))
    """,
    "a tensor stored on the decoder": """
        def parse(strings, labels, size, decoder):
            decoder.size = tf.reduce_max(labels)  # TFG106
            return decoder.decode(strings), labels


        def pipeline(ds, size):
            return ds.map(functools.partial(parse, size=size, decoder=Decoder()))
    """,
    "a value bound to a tensor before the partial is a tensor": """
        def parse(strings, labels, size, decoder):
            decoder.size = size  # TFG106
            return decoder.decode(strings), labels


        def pipeline(ds):
            size = tf.constant(64)
            return ds.map(functools.partial(parse, size=size, decoder=Decoder()))
    """,
    "an element passed by keyword is a tensor": """
        def parse(strings, labels, size, decoder):
            decoder.size = size  # TFG106
            return decoder.decode(strings), labels


        def pipeline(ds, decoder):
            def to_images(strings, labels, sizes):
                return parse(strings, labels, size=sizes, decoder=decoder)

            return ds.map(to_images)
    """,
    "a helper a tf.function also calls with a tensor is not tf.data's alone": """
        def configure(decoder, size):
            decoder.size = size  # TFG106


        def parse(strings, labels, size, decoder):
            if isinstance(decoder, Decoder):
                configure(decoder, size)
            return decoder.decode(strings), labels


        @tf.function
        def resize_all(images, sizes, decoder):
            if isinstance(decoder, Decoder):
                configure(decoder, tf.reduce_max(sizes))
            return images


        def pipeline(ds, size):
            return ds.map(functools.partial(parse, size=size, decoder=Decoder()))
    """,
    "a literal-only message still claims to run per element": """
        def parse(strings, labels, size, decoder):
            logging.info("decoded a batch")  # TFG107
            return decoder.decode(strings), labels


        def pipeline(ds, size):
            return ds.map(functools.partial(parse, size=size, decoder=Decoder()))
    """,
    "an object's settings logged from a tf.function follow TFG107's general rule": """
        @tf.function
        def step(x, augment):
            if isinstance(augment, Augment):
                logging.info("jitter: %s", augment.jitter)  # TFG107
            return x * 2
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_python_values_in_dataset_functions(name: str) -> None:
    source = dedent(_HEADER) + dedent(CASES[name])
    got = {(line, code) for line, code in found(source) if code in _CODES}
    assert got == expected(source)
