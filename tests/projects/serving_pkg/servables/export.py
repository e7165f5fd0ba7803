"""Saves the servable with signatures defined in module.py."""

import tensorflow as tf

from servables import module as mod
from servables.module import Servable, classify, embed, serving_tokens, train_step

servable = Servable()
embed(tf.constant(["smoke test"]))  # a call: the run learns that `embed` is a tf.function
tf.saved_model.save(
    servable,
    "/tmp/servable",
    signatures={
        "serving_default": servable.scores,
        "classify": classify,
        "embed": embed,  # reported at its def in module.py
        "tokens": serving_tokens,  # reported in module.py: a serving name
    },
)
tf.saved_model.save(
    servable,
    "/tmp/servable_embed",
    signatures=mod.embed.get_concrete_function(),  # no specs: also reported at the def
)
tf.saved_model.save(
    servable,
    "/tmp/servable_spec",
    signatures=mod.embed.get_concrete_function(tf.TensorSpec([None], tf.string)),
)
train_step(tf.ones([2, 3]))
