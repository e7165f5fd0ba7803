"""CPython's verdict on a source, before libcst sees it (SPEC §5).

CPython's parser is fast and its messages are the ones users know; it also finds the
sources that would make libcst spend minutes or overflow the C stack (nesting), and the
ones libcst's scope analysis would raise on (a module-level ``nonlocal``).
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import NamedTuple

from tflint_graph.source import prefilter


class SyntaxVerdict(NamedTuple):
    """CPython's verdict on one source."""

    error: SyntaxError | None  # CPython's SyntaxError, if it rejects the source
    too_deep: str | None  # why the source is too deeply nested to analyse, if it is
    tree: ast.Module | None  # CPython's tree, when the source is fine


# Deeper than this (in Python AST levels) libcst needs minutes and gigabytes, or overflows
# the C stack, and the analysis would hit the recursion limit anyway.  CPython itself stops
# at about 3000 levels and at 200 nested brackets.
MAX_NESTING = 500


_CPYTHON_TOO_DEEP = re.compile(r"too many nested parentheses|too many levels of indentation")


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


_STATEMENTS = (ast.Module, *_BLOCKS)


_NEWLINE = re.compile(r"\r\n|\r|\n")


def scan_tree(
    tree: ast.AST, limit: int, source: str | None = None
) -> tuple[bool, ast.Nonlocal | None]:
    """(whether the libcst tree of ``tree`` would nest deeper than ``limit`` nodes, a
    ``nonlocal`` at module level).

    libcst nests ``a and b and c`` (flat in ``ast``) one level per operand.  A module-level
    ``nonlocal`` passes ``ast.parse`` (CPython rejects it only when compiling) but makes
    libcst's scope analysis raise.

    Statements are always walked; an expression only when it could be deep enough: it
    nests at most about two levels per character of its text, so with ``source`` given,
    expressions whose lines are short next to the limit are skipped (nearly all of them).
    """
    ends: list[int] | None = None
    if source is not None:
        ends, total = [0], 0
        for line in _NEWLINE.split(source):
            total += len(line) + 1
            ends.append(total)
    stack: list[tuple[ast.AST, int, bool]] = [(tree, 0, False)]
    children = prefilter.child_nodes
    stray: ast.Nonlocal | None = None
    while stack:
        node, depth, scoped = stack.pop()
        if isinstance(node, ast.BoolOp):
            depth += len(node.values) - 1
        elif isinstance(node, ast.Nonlocal) and not scoped and stray is None:
            stray = node
        if depth > limit:
            return True, stray
        scoped = scoped or isinstance(node, _SCOPES)
        statement = ends is not None and isinstance(node, _STATEMENTS)
        for child in children(node):
            if statement and not isinstance(child, _BLOCKS):
                first, last = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
                if (
                    first is not None
                    and last is not None
                    and last < len(ends)
                    and depth + 1 + 3 * (ends[last] - ends[first - 1]) + 8 <= limit
                ):
                    continue  # too short to nest past the limit
            stack.append((child, depth + 1, scoped))
    return False, stray


def judge_source(source: str) -> SyntaxVerdict:
    """CPython's verdict on ``source``, parsing it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning for "\d" in strings, etc.
        try:
            # CRLF: CPython puts an error at the end of the file one line past it.
            tree = prefilter.parse_python(
                source.replace("\r\n", "\n") if "\r\n" in source else source
            )
        except SyntaxError as exc:
            # Only the message and position are used: without its traceback the error does
            # not hold the caller's frame (a reference cycle through the verdict).
            exc.__traceback__ = None
            if exc.msg and _CPYTHON_TOO_DEEP.search(exc.msg):
                return SyntaxVerdict(exc, exc.msg, None)
            return SyntaxVerdict(exc, None, None)
        except (RecursionError, MemoryError):
            return SyntaxVerdict(None, "too deeply nested to parse", None)
        except ValueError as exc:  # "source code string cannot contain null bytes"
            return SyntaxVerdict(SyntaxError(str(exc)), None, None)
    return judge_tree(tree, source)


def judge_tree(tree: ast.Module, source: str) -> SyntaxVerdict:
    """The verdict on ``source`` whose CPython tree is ``tree`` (flake8 hands us one)."""
    too_deep, stray = scan_tree(tree, MAX_NESTING, source)
    if too_deep:
        return SyntaxVerdict(
            None, f"too deeply nested to parse (more than {MAX_NESTING} levels)", None
        )
    if stray is not None:
        error = SyntaxError("nonlocal declaration not allowed at module level")
        error.lineno, error.offset = stray.lineno, stray.col_offset + 1
        return SyntaxVerdict(error, error.msg, None)
    return SyntaxVerdict(None, None, tree)
