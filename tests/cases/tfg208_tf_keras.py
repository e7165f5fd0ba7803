"""TFG208 cases with tf_keras (Keras 2): dropout layers hold no seed variable there."""
import tensorflow as tf
import tf_keras


@tf.function
def forward(x, images):
    a = tf_keras.layers.Dropout(0.5)(x)
    b = tf_keras.layers.GaussianNoise(0.1)(x)
    rnn = tf_keras.layers.LSTM(2)  # not called: nothing created
    c = tf_keras.layers.Dense(2)(x)  # TFG208
    d = tf_keras.layers.RandomFlip()(images)  # TFG208
    opt = tf_keras.optimizers.SGD()  # TFG208
    return a + b + c, d, rnn, opt


model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
model.build((None, 2))
sgd_a = tf_keras.optimizers.SGD()
sgd_b = tf_keras.optimizers.SGD()


@tf.function
def train_step(x):
    return x


@tf.function
def step(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


step(model, sgd_a, tf.ones([1, 2]))
# Unlike Keras 3, tf_keras creates even a plain SGD's variables on its first apply.
step(model, sgd_b, tf.ones([1, 2]))  # TFG208
