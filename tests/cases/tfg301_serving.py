"""TFG301: serving functions and saved tf.Modules without an input_signature."""

import functools

import tensorflow as tf

SPEC = [tf.TensorSpec(shape=[None, 4], dtype=tf.float32)]
serving_function = functools.partial(tf.function, input_signature=SPEC)
with_spec = tf.function(input_signature=SPEC)


@tf.function
def serve(features):  # TFG301
    return tf.reduce_sum(features[:, 1:], axis=-1)


@tf.function
def serving_parse(records):  # TFG301
    parsed = tf.io.parse_example(records, {"x": tf.io.FixedLenFeature([4], tf.float32)})
    return parsed["x"]


@tf.function(input_signature=None)
def serving_default(x):  # TFG301
    return x * 2.0


@tf.function(input_signature=SPEC)
def serving_with_spec(x):
    return x * 2.0


@serving_function
def serving_from_partial(x):
    return x * 2.0


@with_spec
def serving_from_alias(x):
    return x * 2.0


def serving_input_receiver_fn():  # a plain function: not a tf.function
    return tf.constant([1.0])


@tf.function
def serving_constant():  # no inputs: tf.saved_model.save traces it itself
    return tf.constant(1.0)


@tf.function
def serve_later(x):  # given specs below, the TensorFlow guide's way
    return x + 1.0


CONCRETE = serve_later.get_concrete_function(tf.TensorSpec([None], tf.float32))


def _serve_impl(tokens, lengths):  # TFG301
    first = tf.strings.length(tokens[0])
    return first + tf.gather(lengths, lengths)


serving_tokens = tf.function(_serve_impl)
serve_tokens_ok = tf.function(_serve_impl, input_signature=[tf.TensorSpec([None], tf.string)] * 2)
serve_positional = tf.function(_serve_impl, [tf.TensorSpec([None], tf.string)] * 2)


@tf.function
def train_step(x):  # an eager training entry point, never exported
    return x * 2.0


for _ in range(3):
    train_step(tf.constant([1.0]))


class Scorer(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.ones([4]))
        self.serve_fn = tf.function(self._score)
        self.rescore = tf.function(self._rescore, input_signature=SPEC)

    @tf.function
    def __call__(self, x):  # TFG301
        return tf.tensordot(x, self.w, axes=1)

    @tf.function
    def embed(self, ids, training=False):  # TFG301
        return tf.nn.embedding_lookup(self.w, ids)

    @tf.function(input_signature=SPEC)
    def scores(self, x):
        return x * self.w

    @tf.function
    def reset(self):
        self.w.assign(tf.ones([4]))
        return self.w

    def _score(self, x):  # TFG301
        return x * self.w

    def _rescore(self, x):
        return x * self.w

    def export(self, path):
        tf.saved_model.save(self, path, signatures=None)


scorer = Scorer()
scorer(tf.ones([2, 4]))
tf.saved_model.save(scorer, "/tmp/scorer")


class Exported(tf.Module):
    """Saved with explicit signatures: its other tf.functions are saved too, with only the
    shapes traced before saving (none here), so calling them after loading fails."""

    @tf.function(input_signature=SPEC)
    def predict(self, x):
        return self._scale(x) * 2.0

    @tf.function
    def _scale(self, x):  # a helper of a specced signature: gets its shapes from it
        return x * 3.0

    @tf.function
    def debug(self, x):  # TFG301
        return x + 1.0


exported = Exported()
tf.saved_model.save(exported, "/tmp/exported", signatures={"predict": exported.predict})


class Plain:
    """Not a tf.Module: tf.saved_model.save would reject it; not this rule's concern."""

    @tf.function
    def forward(self, x):
        return x * 2.0


tf.saved_model.save(Plain(), "/tmp/plain")


class Keyed(tf.Module):
    @tf.function
    def forward(self, x):
        return x * 2.0


keyed = Keyed()
spec = tf.TensorSpec([None], tf.float32)
tf.saved_model.save(keyed, "/tmp/keyed", signatures=keyed.forward.get_concrete_function(spec))


class Reassigned(tf.Module):
    @tf.function
    def forward(self, x):
        return x * 2.0


maybe = Reassigned()
maybe = tf.Module()
tf.saved_model.save(maybe, "/tmp/maybe")  # bound twice: not sure which class


@tf.function
def serving_core(x):  # a helper of serving_batch, which gives it its shapes
    return tf.nn.relu(x) * 2.0


@tf.function(input_signature=SPEC)
def serving_batch(x):
    return serving_core(x) + 1.0
