"""Which lines of a cell are IPython syntax: the module keeps every Python line as it is,
line for line, and only IPython syntax becomes a placeholder."""

from __future__ import annotations

import pytest

from tflint_graph.source.notebook import python_lines


@pytest.mark.parametrize(
    "python",
    [
        "x != y",
        "ls = [1, 2]",
        "cd = 3",
        "time.sleep(1)",
        "env if ready else None",
        "history",
        "result = x % y",
        "flags = not_a_magic ! = 2",  # a syntax error stays one
        "print('%d items' % n)",
        "value = obj  # what is it?",
        "'is it?'",
        "@tf.function",
    ],
)
def test_python_lines_are_kept(python: str) -> None:
    assert python_lines([python]).lines == (python,)


@pytest.mark.parametrize(
    ("ipython", "placeholder"),
    [
        ("%matplotlib inline", "pass"),
        ("!pip install -q tensorflow", "pass"),
        ("files = !ls", "files = ..."),
        ("a, b = %who_ls", "a, b = ..."),
        ("tf.function?", "pass"),
        ("??tf.function", "pass"),
        ("/print 1 2", "pass"),
        (",print a b", "pass"),
        ("pip install tensorflow", "pass"),
        ("ls -la", "pass"),
        ("cd ../data", "pass"),
        ("ls .", "pass"),  # the current folder: `ls .` is no Python
        ("cd ..", "pass"),
    ],
)
def test_ipython_syntax_becomes_a_placeholder(ipython: str, placeholder: str) -> None:
    converted = python_lines([ipython])
    assert converted.lines == (placeholder,)
    assert converted.placeholders == {0}


def test_python_that_starts_like_an_automagic_stays_python() -> None:
    # Attribute access may have spaces before the dot: `ls .real` is Python.
    lines = ["ls .real", "cd = 1", "ls . real"]
    assert python_lines(lines).lines == tuple(lines)


def test_a_magic_in_a_block_keeps_its_indentation() -> None:
    converted = python_lines(["for i in range(3):", "    %time step(i)"])
    assert converted.lines == ("for i in range(3):", "    pass")


def test_lines_in_strings_brackets_and_continuations_are_never_magics() -> None:
    lines = [
        'doc = """',
        "%d is text",
        '"""',
        "sizes = [1",
        "    , 2]",
        "total = 1 + \\",
        "    2",
        "!echo one \\",
        "  two",
    ]
    converted = python_lines(lines)
    assert converted.lines == (*lines[:7], "pass", "")
    assert converted.placeholders == {7, 8}


def test_cell_magics() -> None:
    assert python_lines(["%%time", "x = 1"]).lines == ("pass", "x = 1")
    assert python_lines(["", "%%bash", "echo $HOME", "ls"]).lines == ("", "pass", "", "")
    assert python_lines(["x = 1", "%%time"]).lines == ("x = 1", "pass")
    # IPython takes `%%` for a cell magic on the cell's first line only (8.x checks
    # `lines[0]`): after a comment it is a line magic, and the body runs as Python.
    after_comment = python_lines(["# query", "%%bigquery df", "SELECT 1"])
    assert after_comment.lines == ("# query", "pass", "SELECT 1")


def test_a_cell_indented_as_a_whole_loses_that_indentation() -> None:
    converted = python_lines(["  if x:", "      y()", "", "  z()"])
    assert converted.lines == ("if x:", "    y()", "", "z()")
    assert converted.indent == "  "
