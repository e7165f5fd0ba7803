"""Which functions TensorFlow traces (SPEC §1), the calls of tf.functions and export sites."""
