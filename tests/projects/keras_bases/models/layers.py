"""A layer base in one module, subclassed in another that never imports TensorFlow."""

from tensorflow import keras


class Block(keras.layers.Layer):
    def call(self, inputs):
        return inputs


class Plain:
    def call(self, inputs):
        print("plain Python object, called eagerly")
        return inputs
