import tensorflow as tf

from trainpkg import model
from trainpkg.model import plain_step, signed_step

from . import eval_step
from .model import train_step as step


def fit(x, n):
    for epoch in range(n):
        step(x, epoch)  # TFG303
        step(x, lr=0.1 / (epoch + 1))  # TFG303
        model.train_step(x, epoch)  # TFG303
        model.eval_step(x, k=epoch)  # TFG303
        eval_step(x, epoch)  # TFG303
        # Near misses: tensors, signatures, constants, a plain function.
        step(x, tf.constant(0.1 * epoch))
        signed_step(x, epoch)
        model.signed_step(x, epoch)
        step(x, 0.1)
        plain_step(x, epoch)


def fit_dataset(ds):
    for i, batch in enumerate(ds):
        model.train_step(batch, i)  # TFG303
    for batch in ds:
        model.train_step(batch, 0.1)


def fit_rewrapped(x, n):
    for _epoch in range(n):
        fast = tf.function(model.plain_step, jit_compile=True)  # TFG302
        fast(x, 2.0)
    compiled = tf.function(model.plain_step)  # once: fine
    for _epoch in range(n):
        compiled(x, 2.0)
