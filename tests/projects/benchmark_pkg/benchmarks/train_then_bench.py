"""A near miss: the tf.function is used by other code of the module, which may run first."""

import time

import tensorflow as tf

from benchmarks.model import train_step


def train(dataset):
    for batch in dataset:
        train_step(batch)


def bench(batch):
    start = time.perf_counter()
    train_step(batch)  # train() may have traced it already
    return time.perf_counter() - start


def main():
    batch = tf.zeros([64, 256])
    train([batch])
    return bench(batch)
