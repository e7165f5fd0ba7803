"""Multi-head self-attention with a learned relative-position bias."""
import math

import keras
import tensorflow as tf


def scaled_dot_product(q, k, v, bias=None, mask=None):
    scores = tf.matmul(q, k, transpose_b=True) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores += bias
    if mask is not None:
        scores += (1.0 - tf.cast(mask[:, None, None, :], scores.dtype)) * -1e9
    weights = tf.nn.softmax(scores, axis=-1)
    return tf.matmul(weights, v), weights


@keras.saving.register_keras_serializable(package="blocks")
class RelativeSelfAttention(keras.layers.Layer):
    def __init__(self, num_heads, key_dim, max_distance=128, dropout=0.0, debug=False, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.max_distance = max_distance
        self.dropout = dropout
        self.debug = debug
        self.rel_bias = None

    def build(self, input_shape):
        d_model = input_shape[-1]
        self.qkv = keras.layers.Dense(3 * self.num_heads * self.key_dim, use_bias=False)
        self.proj = keras.layers.Dense(d_model)
        self.drop = keras.layers.Dropout(self.dropout)
        super().build(input_shape)

    def _relative_bias(self, length):
        if self.rel_bias is None:
            self.rel_bias = tf.Variable(
                tf.zeros((2 * self.max_distance + 1, self.num_heads)), name="rel_bias"
            )
        pos = tf.range(length)
        rel = pos[None, :] - pos[:, None]
        rel = tf.clip_by_value(rel, -self.max_distance, self.max_distance) + self.max_distance
        return tf.transpose(tf.gather(self.rel_bias, rel), (2, 0, 1))

    def call(self, x, mask=None, training=False):
        batch = tf.shape(x)[0]
        length = tf.shape(x)[1]
        qkv = tf.reshape(self.qkv(x), (batch, length, 3, self.num_heads, self.key_dim))
        qkv = tf.transpose(qkv, (2, 0, 3, 1, 4))
        q, k, v = qkv[0], qkv[1], qkv[2]
        bias = self._relative_bias(length)[None]
        context, weights = scaled_dot_product(q, k, v, bias=bias, mask=mask)
        if self.debug:
            tf.print("attention entropy:", -tf.reduce_mean(weights * tf.math.log(weights + 1e-9)))
        heads = []
        for h in range(self.num_heads):
            heads.append(context[:, h])
        merged = tf.concat(heads, axis=-1)
        return self.proj(self.drop(merged, training=training))

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "key_dim": self.key_dim,
                "max_distance": self.max_distance,
                "dropout": self.dropout,
                "debug": self.debug,
            }
        )
        return config


class TransformerBlock(keras.layers.Layer):
    def __init__(self, num_heads, key_dim, ff_dim, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.attn = RelativeSelfAttention(num_heads, key_dim, dropout=dropout)
        self.norm1 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.norm2 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.ff_dim = ff_dim
        self.ff_drop = keras.layers.Dropout(dropout)

    def build(self, input_shape):
        self.ff1 = keras.layers.Dense(self.ff_dim, activation="gelu")
        self.ff2 = keras.layers.Dense(input_shape[-1])
        super().build(input_shape)

    def call(self, x, mask=None, training=False):
        x = self.norm1(x + self.attn(x, mask=mask, training=training))
        ff = self.ff2(self.ff_drop(self.ff1(x), training=training))
        return self.norm2(x + ff)
