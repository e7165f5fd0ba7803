"""The cost rules (TFG401, TFG404) leave test files alone: tests trace small or Python-only
functions on purpose; the correctness rules still apply there."""

from __future__ import annotations

import pytest

from tests.helpers import dedent, found

SOURCE = dedent(
    """
    import tensorflow as tf

    @tf.function
    def double(x):
        return x * 2

    @tf.function
    def python_only(n=3):
        return n + 1

    @tf.function
    def step(x):
        print("step")
        return double(x) + python_only()
    """
)


@pytest.mark.parametrize(
    "path", ["tests/test_ops.py", "pkg/ops_test.py", "conftest.py", "test_ops.py"]
)
def test_cost_rules_skip_test_files(path: str) -> None:
    assert {code for _, code in found(SOURCE, path)} == {"TFG101"}


@pytest.mark.parametrize("path", ["pkg/ops.py", "tests/fixtures/project/ops.py"])
def test_cost_rules_apply_elsewhere(path: str) -> None:
    # A helper module is no test by its name, wherever it lies.
    assert {code for _, code in found(SOURCE, path)} >= {"TFG101", "TFG401", "TFG404"}
