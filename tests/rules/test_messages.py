"""How a message quotes code (``checks.messages.shorten``): one helper for every rule."""

from __future__ import annotations

from tflint_graph.checks.messages import shorten


def test_shorten_collapses_whitespace_and_cuts_with_an_ellipsis() -> None:
    assert shorten("tf.reduce_sum(\n    x,\n    axis=0)") == "tf.reduce_sum( x, axis=0)"
    assert shorten("x" * 41) == "x" * 37 + "..."
    assert len(shorten("y" * 100, 50)) == 50
    assert shorten("a\n  b", one_line=False) == "a\n  b"
    assert shorten("z" * 40) == "z" * 40
