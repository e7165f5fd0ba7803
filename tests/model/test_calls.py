"""What a call passes (``model.calls``): one helper per question, so every rule reads
arguments alike."""

from __future__ import annotations

import libcst as cst
import pytest

from tflint_graph.model.calls import argument, is_false, is_true, keyword


def _call(code: str) -> cst.Call:
    call = cst.parse_expression(code)
    assert isinstance(call, cst.Call)
    return call


def _code(expr: cst.BaseExpression | None) -> str | None:
    return None if expr is None else cst.Module([]).code_for_node(expr)


@pytest.mark.parametrize(
    ("code", "index", "keywords", "strict", "expected"),
    [
        ("f(a, b)", 1, (), False, "b"),
        ("f(a, fn=b)", 1, ("fn",), False, "b"),
        ("f(a)", 1, ("fn",), False, None),
        ("f(fn=b)", -1, ("fn",), False, "b"),  # keyword only
        ("f(a, b)", -1, ("fn",), False, None),
        ("f(*xs, b)", 0, (), False, "b"),  # starred arguments are not counted
        ("f(*xs, b)", 0, (), True, None),  # ... unless the position must be certain
        ("f(a, *xs)", 0, (), True, "a"),
        ("f(a, **kw)", 1, ("fn",), False, None),
        ("f(a, func=g, fn=h)", 0, ("fn", "func"), False, "g"),  # the first keyword given
    ],
)
def test_argument_reads_a_position_or_a_keyword(
    code: str, index: int, keywords: tuple[str, ...], strict: bool, expected: str | None
) -> None:
    assert _code(argument(_call(code), index, *keywords, strict=strict)) == expected


def test_keyword_and_literal_flags() -> None:
    call = _call("tf.function(f, autograph=False, jit_compile=True)")
    assert is_false(keyword(call, "autograph"))
    assert is_true(keyword(call, "jit_compile"))
    assert keyword(call, "input_signature") is None
    assert not is_true(keyword(call, "autograph")) and not is_false(None)
