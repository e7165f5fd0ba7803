"""CSV text-classification pipeline with length bucketing."""
import csv
import os

import tensorflow as tf

VOCAB_SIZE = 20000
MAX_LEN = 256
DEFAULT_BUCKET_WIDTH = 16

PIPELINE_STATS = {"parsed": 0, "dropped": 0}

vectorizer = tf.keras.layers.TextVectorization(max_tokens=VOCAB_SIZE, output_mode="int")


def adapt_vocabulary(files):
    texts = tf.data.TextLineDataset(files).skip(1)
    texts = texts.map(lambda line: tf.strings.split(line, ",", maxsplit=1)[1])
    vectorizer.adapt(texts.batch(1024))
    print("vocabulary size:", vectorizer.vocabulary_size())


def class_histogram(path):
    counts = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            counts[row["label"]] = counts.get(row["label"], 0) + 1
    PIPELINE_STATS["dropped"] += sum(1 for k in counts if not k.isdigit())
    return counts


def parse_line(line):
    label, text = tf.io.decode_csv(line, record_defaults=[[0], [""]], field_delim=",")
    PIPELINE_STATS["parsed"] += 1  # TFG102
    tokens = vectorizer(tf.strings.lower(text))[:MAX_LEN]
    return tokens, label


def _bucket_key(tokens, label):
    width = int(os.getenv("BUCKET_WIDTH", DEFAULT_BUCKET_WIDTH))  # TFG104
    return tf.cast(tf.shape(tokens)[0] // width, tf.int64)


def _batch_bucket(key, window):
    return window.padded_batch(32, padded_shapes=([None], []))


def make_dataset(pattern, training=True):
    files = tf.data.Dataset.list_files(pattern, shuffle=training)
    ds = files.interleave(
        lambda path: tf.data.TextLineDataset(path).skip(1),
        cycle_length=4,
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    ds = ds.map(parse_line, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.filter(lambda tokens, label: tf.size(tokens) > 0)
    ds = ds.group_by_window(key_func=_bucket_key, reduce_func=_batch_bucket, window_size=32)
    return ds.prefetch(tf.data.AUTOTUNE)


def count_examples(ds):
    return ds.reduce(
        tf.constant(0, tf.int64),
        lambda total, batch: total + tf.cast(tf.shape(batch[0])[0], tf.int64),
    )


if __name__ == "__main__":
    adapt_vocabulary(["data/train.csv"])
    print(class_histogram("data/train.csv"))
    print("examples:", int(count_examples(make_dataset("data/train*.csv"))))
