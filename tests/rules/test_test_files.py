"""The cost rules (TFG401, TFG404) leave test files alone: tests trace small or Python-only
functions on purpose; the correctness rules still apply there.  Anywhere in a test module the
once-per-trace rules (TFG101/102/105/106/107/109) are quiet: a test counting traces relies
on the effect, a double records that it was called, and a test expecting the effect per call
fails by itself."""

from __future__ import annotations

import pytest

from tests.helpers import dedent, expected, found

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
        x.numpy()
        return double(x) + python_only()
    """
)


@pytest.mark.parametrize(
    "path", ["tests/test_ops.py", "pkg/ops_test.py", "conftest.py", "test_ops.py"]
)
def test_cost_rules_skip_test_files(path: str) -> None:
    # The correctness rules still apply (TFG202); once-per-trace effects are test code's own.
    assert {code for _, code in found(SOURCE, path)} == {"TFG202"}


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
        # a helper of a test module is test code too; a test-named function elsewhere is not
        ("step_test.py", "check_traces_once", {"TFG201"}),
        ("step.py", "test_traces_once", {"TFG102", "TFG105", "TFG201"}),
    ],
)
def test_once_per_trace_rules_are_quiet_inside_tests(
    path: str, function: str, want: set[str]
) -> None:
    source = TRACE_COUNTING.replace("test_traces_once", function)
    assert {code for _, code in found(source, path)} == want


MOCK_LAYER = dedent(
    """
    import tensorflow as tf

    class MockAttention(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.calls = []

        def call(self, x):
            self.calls.append(True)  # TFG102 outside a test module
            print("mock attention called")  # TFG101 outside a test module
            return x
    """
)


@pytest.mark.parametrize(
    ("path", "want"), [("encoder_test.py", set()), ("encoder.py", {"TFG101", "TFG102"})]
)
def test_a_double_recording_that_it_was_called_is_test_code(path: str, want: set[str]) -> None:
    # The tests assert on `calls`; had tracing recorded too few calls, they would fail.
    assert {code for _, code in found(MOCK_LAYER, path)} == want


EXPECTED_FAILURE = dedent(
    """
    import pytest
    import tensorflow as tf

    class SmartAutographTest(tf.test.TestCase):
        def test_needs_autograph(self):
            def branchy(x):
                if x > 0:  # TFG201 unless the test expects the error
                    return x * x
                return -x

            CONTEXT
                step = tf.function(branchy, autograph=False)
                step(tf.constant(2.0))
    """
)


@pytest.mark.parametrize(
    ("context", "path", "reported"),
    [
        ("with self.assertRaises(Exception):", "smart_test.py", False),
        ("with self.assertRaisesRegex(TypeError, 'bool'):", "smart_test.py", False),
        ("with pytest.raises(TypeError):", "test_smart.py", False),
        ("with tf.device('/cpu:0'):", "smart_test.py", True),  # not an expected error
        # Anywhere, not only in a test module: the code says it expects the error.
        ("with self.assertRaises(Exception):", "smart.py", False),
    ],
)
def test_a_trace_a_test_expects_to_fail_is_not_reported(
    context: str, path: str, reported: bool
) -> None:
    source = EXPECTED_FAILURE.replace("CONTEXT", context)
    assert ("TFG201" in {code for _, code in found(source, path)}) is reported


def test_a_guide_showing_the_error_of_a_cell_is_not_reported() -> None:
    # A guide (here a notebook's cells in order) defines `f` again and again; the one
    # it only calls under `with assert_raises(ValueError):` shows the error on purpose.
    source = dedent(
        """
        import contextlib

        import tensorflow as tf

        @contextlib.contextmanager
        def assert_raises(error_class):
            try:
                yield
            except error_class as e:
                print(f"Caught expected exception {error_class}: {e}")

        @tf.function
        def f(x):
            v = tf.Variable(1.0)
            v.assign_add(x)
            return v

        with assert_raises(ValueError):
            f(1.0)

        @tf.function
        def f(x):
            v = tf.Variable(1.0)  # TFG205
            return v + x

        f(2.0)
        """
    )
    assert {f for f in found(source, "guide.py") if f[1] == "TFG205"} == expected(source)


# One source per rule that is quiet in test modules since tests do these things on purpose:
# a sweep of Python settings (TFG303), a function registered before or without a trace
# (TFG301), a tf.function made per step of a short loop (TFG302), a layer built in a call
# the test runs eagerly (TFG208).
ON_PURPOSE_IN_TESTS = {
    "TFG303": """
        import tensorflow as tf

        @tf.function
        def rounding(x, beta):
            return x * beta

        def test_sweep():
            for beta in [0.0, 0.9]:
                rounding(tf.constant(1.0), beta)
        """,
    "TFG301": """
        import tensorflow as tf

        def test_export_traced_endpoint():
            @tf.function
            def serve(x):
                return x + 1

            module = tf.Module()
            module.serve = serve
            tf.saved_model.save(module, "/tmp/out")
        """,
    "TFG302": """
        import tensorflow as tf

        def test_restore_with_function(model):
            def train_fn():
                @tf.function
                def call_model(x):
                    return model(x)

                return call_model(tf.ones([1, 2]))

            for _ in range(2):
                train_fn()
        """,
    "TFG304": """
        import tensorflow as tf

        @tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None, 8])])
        def score(x):
            return tf.nn.softmax(x)
        """,
    "TFG208": """
        import tensorflow as tf

        class Shim(tf.keras.layers.Layer):
            def call(self, x):
                return tf.keras.layers.Dense(2)(x)

        @tf.function
        def run(layer, x):
            return layer(x)
        """,
}


@pytest.mark.parametrize("code", sorted(ON_PURPOSE_IN_TESTS))
def test_cost_and_rebuild_rules_are_quiet_in_test_modules(code: str) -> None:
    source = dedent(ON_PURPOSE_IN_TESTS[code])
    assert code in {c for _, c in found(source, "pkg/export.py")}
    assert code not in {c for _, c in found(source, "pkg/export_test.py")}
