"""Learning-rate schedules and the callbacks that report them."""
import logging
import math
import time

import tensorflow as tf

logger = logging.getLogger(__name__)


class WarmupCosineDecay(tf.keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up followed by cosine decay to ``min_lr``."""

    def __init__(self, peak_lr, warmup_steps, total_steps, min_lr=0.0):
        super().__init__()
        if warmup_steps >= total_steps:
            raise ValueError("warmup_steps must be smaller than total_steps")
        self.peak_lr = peak_lr
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.min_lr = min_lr

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        warmup = self.peak_lr * step / float(self.warmup_steps)
        decay_steps = float(self.total_steps - self.warmup_steps)
        progress = tf.minimum((step - self.warmup_steps) / decay_steps, 1.0)
        cosine = self.min_lr + 0.5 * (self.peak_lr - self.min_lr) * (
            1.0 + tf.cos(math.pi * progress)
        )
        return tf.where(step < self.warmup_steps, warmup, cosine)

    def get_config(self):
        return {
            "peak_lr": self.peak_lr,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "min_lr": self.min_lr,
        }


@tf.function
def sample_schedule(schedule, num_points):
    steps = tf.cast(tf.linspace(0.0, float(schedule.total_steps), num_points), tf.int64)
    return tf.map_fn(lambda s: schedule(s), steps, fn_output_signature=tf.float32)


class LRLogger(tf.keras.callbacks.Callback):
    def __init__(self, log_every=100):
        super().__init__()
        self.log_every = log_every
        self.history = []
        self._t0 = None

    def on_train_begin(self, logs=None):
        self._t0 = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        if batch % self.log_every:
            return
        lr = self.model.optimizer.learning_rate
        if isinstance(lr, tf.keras.optimizers.schedules.LearningRateSchedule):
            lr = lr(self.model.optimizer.iterations)
        self.history.append(float(lr))
        logger.info(
            "batch %d lr=%.6f elapsed=%.1fs", batch, float(lr), time.perf_counter() - self._t0
        )

    def on_train_end(self, logs=None):
        print(f"trained {len(self.history) * self.log_every} batches; final lr {self.history[-1]:.2e}")


if __name__ == "__main__":
    schedule = WarmupCosineDecay(peak_lr=3e-4, warmup_steps=1000, total_steps=20000)
    for step, value in enumerate(sample_schedule(schedule, 11).numpy()):
        print(f"{step * 2000:>6d}  {value:.6f}")
