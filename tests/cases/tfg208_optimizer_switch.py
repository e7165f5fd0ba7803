"""TFG208 cases: one tf.function called with several optimizers or models (Keras 3)."""
import tensorflow as tf
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(1)])
other_model = keras.Sequential([keras.layers.Dense(1)])
model.build((None, 3))
other_model.build((None, 3))
opt_a = keras.optimizers.Adam()
opt_b = keras.optimizers.Adam(learning_rate=1e-4)
plain_sgd = keras.optimizers.SGD(0.1)
momentum_sgd = keras.optimizers.SGD(0.1, momentum=0.9)
rms = keras.optimizers.RMSprop()
alias = opt_a


@tf.function
def train_step(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def evaluate(model, x):
    return model(x)


def fit_step(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


wrapped_step = tf.function(fit_step)

x = tf.ones([2, 3])
train_step(model, opt_a, x)
train_step(model, opt_a, x)  # the same object again: fine
train_step(model, alias, x)  # an alias: not known to be another object
train_step(model, opt_b, x)  # TFG208
train_step(model, plain_sgd, x)  # no slot variables (Keras 3): fine
train_step(model, momentum_sgd, x)  # TFG208
train_step(model, optimizer=rms, x=x)  # TFG208
train_step(other_model, opt_a, x)  # TFG208

evaluate(model, x)
evaluate(other_model, x)  # no optimizer in the function: fine once built

wrapped_step(model, opt_a, x)
wrapped_step(model, opt_b, x)  # TFG208
fit_step(model, opt_a, x)  # the plain Python function: eager
fit_step(model, rms, x)


def experiment(x):
    first = keras.optimizers.Adam()
    second = keras.optimizers.Nadam()
    train_step(model, first, x)
    train_step(model, second, x)  # TFG208
    for _ in range(3):
        train_step(model, keras.optimizers.Adam(), x)  # TFG208


def one_each(x):
    train_step(model, keras.optimizers.Adam(), x)  # a separate scope: not compared


def per_optimizer_factory():
    @tf.function
    def step(x):
        return x

    return step


step_a = per_optimizer_factory()
step_a(x)
step_a(x)
