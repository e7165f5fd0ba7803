"""The cost rules (TFG401, TFG404) leave test files alone: tests trace small or Python-only
functions on purpose; the correctness rules still apply there.  Inside a test function the
once-per-trace rules (TFG101/102/105/106/107/109) are quiet: a test counting traces relies
on the effect, and one expecting it per call fails by itself."""

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


TRACE_COUNTING = dedent(
    """
    import tensorflow as tf

    COUNT = 0

    def test_traces_once():
        traces = []

        @tf.function
        def step(x):
            global COUNT
            traces.append(1)  # TFG102 outside a test
            COUNT += 1  # TFG105 outside a test
            print("tracing")
            return tf.reduce_sum(x) if bool(x > 0) else x  # TFG201 always

        step(tf.constant(1.0))
        step(tf.constant(2.0))
        assert len(traces) == 1
    """
)


@pytest.mark.parametrize(
    ("path", "function", "want"),
    [
        ("tests/test_step.py", "test_traces_once", {"TFG201"}),
        ("step_test.py", "test_traces_once", {"TFG201"}),
        # not a test: a helper of a test module, or a test-named function elsewhere
        ("step_test.py", "check_traces_once", {"TFG102", "TFG105", "TFG201"}),
        ("step.py", "test_traces_once", {"TFG102", "TFG105", "TFG201"}),
    ],
)
def test_once_per_trace_rules_are_quiet_inside_tests(
    path: str, function: str, want: set[str]
) -> None:
    source = TRACE_COUNTING.replace("test_traces_once", function)
    assert {code for _, code in found(source, path)} == want
