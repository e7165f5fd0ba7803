"""For TFG101's fix: what a formatted ``print`` argument prints, as text and values, and
the ``tf.print`` arguments that print the same text.

``print(f"loss {loss}")`` formats ``loss`` with ``str()`` while tracing; ``tf.print`` cannot
format a tensor into a string, but it prints its arguments joined by ``sep`` (default
``" "``): ``tf.print("loss", loss)`` prints ``loss 0.5`` on every call (verified with
TensorFlow 2.21, like every claim here).  Only formats that ``str()`` their values are split:
f-strings without a format spec or a conversion other than ``!s``, ``"...".format()`` with
plain ``{}``/``{0}``/``{name}`` fields each used once in order, and ``"..." % values`` with
plain ``%s`` (and ``%%``).  Anything else (``{x:.3f}``, ``{x!r}``, ``%d``) has no faithful
``tf.print`` spelling.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Sequence

import libcst as cst

# A piece of printed output: literal text, or a value printed with str().
Piece = str | cst.BaseExpression

_PERCENT = re.compile(r"%(.)", re.S)


def is_format(expr: cst.BaseExpression) -> bool:
    """``expr`` builds its string from values: an f-string with a replacement field, a
    ``.format()`` call or a ``%`` on a string literal."""
    if isinstance(expr, cst.FormattedString):
        return any(isinstance(p, cst.FormattedStringExpression) for p in expr.parts)
    if isinstance(expr, cst.ConcatenatedString):
        return is_format(expr.left) or is_format(expr.right)
    if isinstance(expr, cst.Call):
        func = expr.func
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value == "format"
            and _literal_text(func.value) is not None
        )
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo):
        return _literal_text(expr.left) is not None
    return False


def pieces(expr: cst.BaseExpression) -> list[Piece] | None:
    """The text and values ``str(expr)`` is made of, in order, or None when ``expr`` is no
    format (see :func:`is_format`) or one whose values are not printed with ``str()``."""
    if isinstance(expr, cst.FormattedString):
        return _fstring_pieces(expr)
    if isinstance(expr, cst.ConcatenatedString):
        left = pieces(expr.left) if is_format(expr.left) else _text_pieces(expr.left)
        right = pieces(expr.right) if is_format(expr.right) else _text_pieces(expr.right)
        return None if left is None or right is None else left + right
    if isinstance(expr, cst.Call) and is_format(expr):
        assert isinstance(expr.func, cst.Attribute)
        return _format_pieces(_literal_text(expr.func.value), expr.args)
    if isinstance(expr, cst.BinaryOperation) and is_format(expr):
        return _percent_pieces(_literal_text(expr.left), expr.right)
    return None


def values(found: Sequence[Piece]) -> list[cst.BaseExpression]:
    return [p for p in found if not isinstance(p, str)]


def spaced(found: Sequence[Piece]) -> list[Piece] | None:
    """``tf.print`` arguments that, joined by one space, print what ``found`` prints; None
    when the text around the values is not space-separated (``f"loss={loss}"``)."""
    texts, exprs = [""], []
    for piece in found:
        if isinstance(piece, str):
            texts[-1] += piece
        else:
            exprs.append(piece)
            texts.append("")
    if not exprs:
        return [texts[0]]
    out: list[Piece] = []
    for i, text in enumerate(texts):
        if i == 0:
            if text:
                if len(text) < 2 or not text.endswith(" "):
                    return None
                out.append(text[:-1])
        elif i == len(texts) - 1:
            if text:
                if len(text) < 2 or not text.startswith(" "):
                    return None
                out.append(text[1:])
        elif text != " ":
            if len(text) < 2 or not (text.startswith(" ") and text.endswith(" ")):
                return None
            out.append(text[1:-1])
        if i < len(exprs):
            out.append(exprs[i])
    return out


def joined(found: Sequence[Piece]) -> list[Piece]:
    """``found`` with adjacent texts merged and empty texts dropped: the arguments of a
    ``tf.print(..., sep="")``."""
    out: list[Piece] = []
    for piece in found:
        if isinstance(piece, str):
            if not piece:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += piece
                continue
        out.append(piece)
    return out


def string_node(value: str, quote: str = '"') -> cst.SimpleString:
    """A string literal for ``value``, in ``quote`` where that needs no escaping."""
    text = repr(value)
    if text[0] != quote and quote == '"' and '"' not in value:
        text = '"' + text[1:-1].replace("\\'", "'") + '"'
    return cst.SimpleString(text)


def quote_of(expr: cst.BaseExpression) -> str:
    """The quote character a string literal (or f-string) is written with."""
    if isinstance(expr, cst.FormattedString):
        return expr.end[0]
    if isinstance(expr, cst.SimpleString):
        return expr.quote[0]
    if isinstance(expr, cst.ConcatenatedString):
        return quote_of(expr.left)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return quote_of(expr.func.value)
    if isinstance(expr, cst.BinaryOperation):
        return quote_of(expr.left)
    return '"'


def _literal_text(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.SimpleString | cst.ConcatenatedString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _text_pieces(expr: cst.BaseExpression) -> list[Piece] | None:
    if isinstance(expr, cst.FormattedString):
        return _fstring_pieces(expr)
    text = _literal_text(expr)
    return None if text is None else [text]


def _fstring_pieces(expr: cst.FormattedString) -> list[Piece] | None:
    prefix = expr.prefix.replace("f", "").replace("F", "")
    out: list[Piece] = []
    for part in expr.parts:
        if isinstance(part, cst.FormattedStringText):
            text = part.value.replace("{{", "{").replace("}}", "}")
            try:
                value = ast.literal_eval(f"{prefix}{expr.end}{text}{expr.end}")
            except (SyntaxError, ValueError):
                return None
            if not isinstance(value, str):
                return None
            out.append(value)
        elif isinstance(part, cst.FormattedStringExpression):
            if part.format_spec or part.equal is not None or part.conversion not in (None, "s"):
                return None
            out.append(part.expression)
        else:
            return None
    return out


def _format_pieces(template: str | None, args: Sequence[cst.Arg]) -> list[Piece] | None:
    if template is None or any(a.star for a in args):
        return None
    positional = [a.value for a in args if a.keyword is None]
    named = {a.keyword.value: a.value for a in args if a.keyword is not None}
    used: list[cst.BaseExpression] = []
    out: list[Piece] = []
    auto = 0
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return None
    for text, field, spec, conversion in fields:
        out.append(text)
        if field is None:
            continue
        if spec or conversion not in (None, "s"):
            return None
        if field == "":
            index: int | str = auto
            auto += 1
        elif field.isdigit():
            index = int(field)
        elif field.isidentifier():
            index = field
        else:
            return None  # {0.shape}, {a[1]}
        value = named.get(index) if isinstance(index, str) else None
        if isinstance(index, int):
            value = positional[index] if index < len(positional) else None
        if value is None:
            return None
        used.append(value)
        out.append(value)
    # Each value used once, in the order written: nothing evaluated twice, skipped or early.
    given = positional + list(named.values())
    if len(used) != len(given) or any(u is not g for u, g in zip(used, given, strict=True)):
        return None
    return out


def _percent_pieces(template: str | None, right: cst.BaseExpression) -> list[Piece] | None:
    if template is None:
        return None
    if isinstance(right, cst.Tuple):
        if any(isinstance(el, cst.StarredElement) for el in right.elements):
            return None
        given = [el.value for el in right.elements]
    elif isinstance(right, cst.Dict):
        return None
    else:
        # One value that is not a tuple literal: formatted as itself (a tuple value would be
        # unpacked, a case tf.print arguments never were in working code).
        given = [right]
    out: list[Piece] = []
    start = 0
    queue = list(given)
    for match in _PERCENT.finditer(template):
        out.append(template[start : match.start()])
        start = match.end()
        kind = match.group(1)
        if kind == "%":
            out.append("%")
        elif kind == "s" and queue:
            out.append(queue.pop(0))
        else:
            return None  # %d, %r, %(name)s, a width: formatted otherwise than str()
    out.append(template[start:])
    if queue or "%" in template[start:]:
        return None
    return out
