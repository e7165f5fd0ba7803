"""``unroll-max`` (TFG305) and ``tiny-helper-max-ops`` (TFG401) come from the configuration."""

from __future__ import annotations

from tests.helpers import dedent, found
from tflint_graph import Config

LOOP = dedent(
    """
    import tensorflow as tf

    @tf.function
    def step(x):
        for i in range(50):
            x = x + 1.0
        return x
    """
)

HELPER = dedent(
    """
    import tensorflow as tf

    @tf.function
    def helper(x, y):
        a = tf.matmul(x, y)
        return tf.nn.relu(a) + 1.0

    @tf.function
    def step(x, y):
        return helper(x, y)
    """
)


def codes(source: str, config: Config | None = None) -> set[tuple[int, str]]:
    return {(line, code) for line, code in found(source, config=config) if code != "TFG404"}


def test_unroll_max_default_and_configured() -> None:
    assert codes(LOOP) == set()  # 50 <= 100
    assert codes(LOOP, Config(unroll_max=49)) == {(5, "TFG305")}
    assert codes(LOOP, Config(unroll_max=50)) == set()


def test_tiny_helper_max_ops_default_and_configured() -> None:
    assert codes(HELPER) == set()  # three ops > 2
    assert codes(HELPER, Config(tiny_helper_max_ops=3)) == {(4, "TFG401")}
    assert codes(HELPER, Config(tiny_helper_max_ops=0)) == set()
