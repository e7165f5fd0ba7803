"""What a call passes: one helper per question, so that every rule reads arguments alike."""

from __future__ import annotations

import libcst as cst


def keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The value passed as ``name=``, if any."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def argument(
    call: cst.Call, index: int, *keywords: str, strict: bool = False
) -> cst.BaseExpression | None:
    """The argument given as one of ``keywords=``, else at positional ``index`` (-1: keyword
    only).  ``*args``/``**kwargs`` are skipped when counting positions; with ``strict`` a
    starred argument at or before ``index`` makes the position unknown (None)."""
    for name in keywords:
        found = keyword(call, name)
        if found is not None:
            return found
    if index < 0:
        return None
    positional = [a for a in call.args if a.keyword is None]
    if strict:
        if any(a.star for a in positional[: index + 1]):
            return None
    else:
        positional = [a for a in positional if not a.star]
    return positional[index].value if index < len(positional) else None


def is_true(expr: cst.BaseExpression | None) -> bool:
    """``expr`` is the literal ``True``."""
    return isinstance(expr, cst.Name) and expr.value == "True"


def is_false(expr: cst.BaseExpression | None) -> bool:
    """``expr`` is the literal ``False``."""
    return isinstance(expr, cst.Name) and expr.value == "False"
