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
    """The argument given as one of ``keywords=`` (the first such in the call), else at
    positional ``index`` (-1: keyword only).  ``*args``/``**kwargs`` are skipped when
    counting positions; with ``strict`` a starred argument at or before ``index`` makes the
    position unknown (None)."""
    value = None
    position = 0
    unknown = False
    for arg in call.args:
        keyword = arg.keyword
        if keyword is not None:
            if keyword.value in keywords:
                return arg.value
        elif arg.star:
            unknown = unknown or (strict and position <= index)
        else:
            if position == index:
                value = arg.value
            position += 1
    return None if unknown else value


def is_true(expr: cst.BaseExpression | None) -> bool:
    """``expr`` is the literal ``True``."""
    return isinstance(expr, cst.Name) and expr.value == "True"


def is_false(expr: cst.BaseExpression | None) -> bool:
    """``expr`` is the literal ``False``."""
    return isinstance(expr, cst.Name) and expr.value == "False"
