"""Graph-mode sequence utilities: greedy decoding, scoring, truncation."""
import logging

import tensorflow as tf

logger = logging.getLogger(__name__)

decode_trace = []


def make_greedy_decoder(model, max_len, eos_id):
    @tf.function
    def decode(start_tokens):
        batch = tf.shape(start_tokens)[0]
        tokens = tf.TensorArray(tf.int32, size=max_len)
        finished = tf.zeros([batch], tf.bool)

        def cond(i, prev, finished, tokens):
            return tf.logical_and(i < max_len, tf.logical_not(tf.reduce_all(finished)))

        def body(i, prev, finished, tokens):
            logits = model(prev[:, None])[:, -1]
            nxt = tf.argmax(logits, -1, output_type=tf.int32)
            nxt = tf.where(finished, eos_id, nxt)
            decode_trace.append(i)  # TFG102
            tokens = tokens.write(i, nxt)
            return i + 1, nxt, finished | tf.equal(nxt, eos_id), tokens

        _, _, _, tokens = tf.while_loop(cond, body, (0, start_tokens, finished, tokens))
        return tf.transpose(tokens.stack())

    return decode


def _sequence_score(logprobs):
    logger.debug("scoring sequence with shape %s", logprobs.shape)  # TFG107
    return tf.reduce_sum(logprobs) / tf.cast(tf.size(logprobs), tf.float32)


@tf.function
def score_batch(logprob_batch):
    return tf.map_fn(_sequence_score, logprob_batch, fn_output_signature=tf.float32)


def _clip_long(x, limit):
    print("clipping sequence to", limit)  # TFG101
    return x[:limit]


@tf.function
def maybe_truncate(x, limit=128):
    return tf.cond(tf.shape(x)[0] > limit, lambda: _clip_long(x, limit), lambda: x)


@tf.function
def apply_noise(x, mode):
    branches = [
        lambda: x,
        lambda: x + tf.random.normal(tf.shape(x), stddev=0.1),
        lambda: tf.nn.dropout(x, rate=0.1),
    ]
    return tf.switch_case(mode, branches)


def summarize(decoded, vocab, max_rows=5):
    rows = decoded.numpy()[:max_rows]
    for row in rows:
        words = [vocab[t] for t in row if t < len(vocab)]
        print(" ".join(words))
    logger.info("printed %d of %d decoded rows", len(rows), decoded.shape[0])
