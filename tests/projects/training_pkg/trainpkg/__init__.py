"""A small training package: tf.functions in model.py, loops that call them elsewhere."""

from .model import eval_step, train_step

__all__ = ["eval_step", "train_step"]
