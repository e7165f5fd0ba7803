"""TFG103: a Python draw that only seeds a stateful TensorFlow random op is fine; one that
reaches a stateless op's seed, a project function or the graph's values is not."""

from __future__ import annotations

import pytest

from tests.helpers import dedent, expected, found


def tfg103(source: str) -> set[tuple[int, str]]:
    return {(line, code) for line, code in found(source, "augment.py") if code == "TFG103"}


# Each source marks its expected findings; everything unmarked must stay silent.
CASES = {
    "generator_drawing_op_seeds_through_a_lambda": """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def perlin(x, seed=None):
            rand = np.random.default_rng(seed)
            seed = lambda: rand.integers(np.iinfo(int).max)
            std = tf.random.uniform([], minval=0.1, maxval=1.0, seed=seed())
            return x + tf.random.normal(tf.shape(x), stddev=std, seed=seed())
        """,
    "op_seeds_through_a_one_line_def_and_int": """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def crop(x, seed=None):
            rng = np.random.default_rng(seed)

            def draw():
                return rng.integers(2**31)

            x = tf.image.random_flip_left_right(x, seed=draw())
            return tf.nn.dropout(x, 0.5, seed=int(rng.integers(100)))
        """,
    "a_draw_named_then_used_as_seed": """
        import random
        import tensorflow as tf

        @tf.function
        def jitter(x):
            op_seed = random.randint(0, 100)
            return x + tf.random.uniform([], seed=op_seed)
        """,
    "stateless_seed_is_frozen": """
        import random
        import tensorflow as tf

        @tf.function
        def jitter(x):
            s = random.randint(0, 100)  # TFG103
            return x + tf.random.stateless_uniform([], seed=[s, 0])
        """,
    "generator_also_drawing_a_value": """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def jitter(x):
            rng = np.random.default_rng()  # TFG103
            return x + tf.random.uniform([], seed=rng.integers(9)) + rng.normal()  # TFG103
        """,
    "seed_handed_to_a_project_function": """
        import random
        import tensorflow as tf

        def my_noise(x, seed):
            return x

        @tf.function
        def jitter(x):
            s = random.randint(0, 100)  # TFG103
            return my_noise(x, seed=s)
        """,
    "seed_used_as_a_value_too": """
        import random
        import tensorflow as tf

        @tf.function
        def jitter(x):
            s = random.randint(0, 100)  # TFG103
            return x * s + tf.random.uniform([], seed=s)
        """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_seed_only_draws(name: str) -> None:
    source = dedent(CASES[name])
    assert tfg103(source) == {e for e in expected(source) if e[1] == "TFG103"}


def test_making_a_generator_from_a_seed_draws_nothing() -> None:
    source = dedent(
        """
        import random

        import numpy as np
        import tensorflow as tf


        class Simulator(tf.keras.layers.Layer):
            def call(self, x):
                config = dict(rng=np.random.RandomState(self.seed))
                fixed = np.random.default_rng(seed=3)
                stream = random.Random(self.seed)
                fresh = np.random.RandomState()  # TFG103
                entropy = np.random.default_rng(None)  # TFG103
                return x
        """
    )
    got = {(line, code) for line, code in found(source) if code == "TFG103"}
    assert got == expected(source)
