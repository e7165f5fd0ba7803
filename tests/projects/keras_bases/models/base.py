import tensorflow as tf


class BaseModel(tf.keras.Model):
    pass
