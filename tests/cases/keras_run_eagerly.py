"""run_eagerly=True switches the compiled models' steps off, not every Keras class."""
import tensorflow as tf
from tensorflow import keras

# tip: pass run_eagerly=True to compile() while debugging (a comment changes nothing)


class Antirectifier(keras.layers.Layer):
    def call(self, inputs):
        print("shape:", inputs.shape)  # TFG101
        return tf.nn.relu(inputs)


class DebugModel(keras.Model):
    def train_step(self, data):
        print("eager step")  # compiled with run_eagerly=True below: runs eagerly
        return super().train_step(data)


model = DebugModel()
model.compile(optimizer="adam", loss="mse", run_eagerly=True)
