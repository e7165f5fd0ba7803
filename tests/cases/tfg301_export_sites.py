"""TFG301: functions handed to export calls (signatures=, add_endpoint) without specs."""

import keras
import tensorflow as tf
import tensorflow as tf2
import tf_keras
from tensorflow import function, saved_model
from tensorflow import keras as tfk

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
SPEC = [tf.TensorSpec(shape=[None, 4], dtype=tf.float32)]


@tf.function
def predict(x):  # TFG301
    return model(x)


@tf2.function
def classify(x):  # TFG301
    return tf2.argmax(model(x), axis=-1)


@function
def logits(x):  # TFG301
    return model(x)


@tf.compat.v2.function
def probabilities(x):  # TFG301
    return tf.nn.softmax(model(x))


@tf.function(input_signature=SPEC)
def predict_ok(x):
    return model(x)


@tf.function
def scores(x):
    return model(x)


def plain_predict(x):  # TFG301
    return model(x)


def plain_helper(x):  # a plain function never exported
    return model(x)


@tf.function
def decode(image_bytes):  # TFG301
    image = tf.io.decode_jpeg(image_bytes[0], channels=3)
    return model(tf.reshape(tf.cast(image, tf.float32), [-1, 4]))


@tf.function
def encode(x):  # TFG301
    return tf.strings.as_string(x)


@tf.function
def reduce(x):  # TFG301
    return tf.reduce_sum(x)


@tf.function
def summarize(x):  # TFG301
    return tf.reduce_mean(x)


@tf.function
def embed(x):  # TFG301
    return model(x)


@tf.function
def embed_ok(x):
    return model(x)


@tf.function
def doubled(x):  # TFG301
    return model(x) * 2.0


module = tf.Module()
module.model = model  # tracked, so its variables are saved
tf.saved_model.save(module, "/tmp/a", signatures=predict)
saved_model.save(module, "/tmp/b", {"classify": classify, "ok": predict_ok})
signatures = {"serving_default": logits, "scores": scores.get_concrete_function(SPEC[0])}
tf2.saved_model.save(module, "/tmp/c", signatures=signatures)
tf.compat.v2.saved_model.save(module, "/tmp/d", signatures=probabilities.get_concrete_function())
tf.saved_model.save(module, "/tmp/e", signatures=plain_predict)
tf.saved_model.save(module, "/tmp/f", signatures=predict_ok.get_concrete_function())
concrete = reduce.get_concrete_function()
tf.saved_model.save(module, "/tmp/g", signatures=concrete)
tf.saved_model.save(model, "/tmp/h")  # a Keras model: Keras adds its serving signature

tf_model = tf_keras.Sequential([tf_keras.layers.Dense(2)])
tf_model.save("/tmp/i", save_format="tf", signatures={"decode": decode})
tfk.models.save_model(tf_model, "/tmp/j", signatures=encode)

archive = keras.export.ExportArchive()
archive.track(model)
archive.add_endpoint("summarize", summarize)
archive.add_endpoint("ok", embed_ok, input_signature=SPEC)
archive.add_endpoint("plain", plain_helper, SPEC)
archive.add_endpoint("lambda_ok", lambda x: model(x), input_signature=SPEC)
tf_archive = tf_keras.export.ExportArchive()
tf_archive.add_endpoint(name="embed", fn=embed)

model.export("/tmp/k")  # Keras builds the serving signature from the model's inputs
model.export("/tmp/m", signatures={"doubled": doubled})  # Keras 3 ignores signatures=
plain_helper(tf.ones([1, 4]))
scores(tf.ones([1, 4]))


def export_with_shadowed_tf(tf, module):
    tf.saved_model.save(module, "/tmp/l", signatures=scores)  # `tf` is a parameter here


class Recorder:
    def add_endpoint(self, name, fn):
        return (name, fn)


Recorder().add_endpoint("helper", plain_helper)  # not an ExportArchive; a plain function
