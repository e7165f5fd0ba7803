"""How a message quotes code (``checks.messages.shorten``): one helper for every rule."""

from __future__ import annotations

from tflint_graph.checks.messages import shorten


def test_shorten_collapses_whitespace_and_cuts_with_an_ellipsis() -> None:
    assert shorten("tf.reduce_sum(\n    x,\n    axis=0)") == "tf.reduce_sum( x, axis=0)"
    assert shorten("x" * 41) == "x" * 37 + "..."
    assert len(shorten("y" * 100, 50)) == 50
    assert shorten("a\n  b", one_line=False) == "a\n  b"
    assert shorten("z" * 40) == "z" * 40


def test_a_message_quoting_code_spread_over_lines_stays_on_one_line() -> None:
    # Text output is one finding per line (`path:line:col: CODE message`): a quoted call
    # written over several lines must not break it.
    from tests.helpers import dedent
    from tflint_graph import lint_source

    source = dedent(
        """
        import tensorflow as tf

        def body(x):
            return x * 2

        @tf.function
        def step(x, i):
            for k in range(
                    1000):
                x = x + 1
            return x

        for i in range(3):
            f = tf.function(
                body, jit_compile=True)
            f(tf.constant(1.0))
            step(tf.constant(1.0), [
                i, i + 1])
        """
    )
    findings = lint_source(source)
    assert {f.code for f in findings} >= {"TFG302", "TFG303", "TFG305"}
    assert all("\n" not in f.message for f in findings)
