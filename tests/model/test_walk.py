"""``walk.children`` is libcst's ``CSTNode.children`` without the formatting nodes.

``tflint_graph.model.walk`` reads each node's dataclass fields instead of running libcst's
``_visit_and_replace_children``, and promises the same children, in the same (source) order,
minus the nodes that only spell the source: whitespace, comments, brackets, commas and the
other tokens listed in ``LEFT_OUT``.  Every node of real modules (the demo and dynamic-mode
projects, the rule cases, the corpora, the multi-file projects) and of a module of syntax
corners is compared: the same node objects, in the same order, with and without an ``Index``
of the tree, and ``descendants`` is libcst's pre-order walk pruned at the left-out nodes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import libcst as cst
import pytest

from tests.helpers import CASES, CORPUS, PROJECTS, REPO, REPO_FIXTURES
from tflint_graph.model import walk

# What ``walk`` documents it leaves out: nodes that only spell the source (whitespace,
# comments, newlines, brackets, separators), and the marker tokens whose meaning the parent
# node already carries (``FunctionDef.asynchronous``, ``ImportFrom.names`` being ``*``,
# ``Parameters.star_arg``/``posonly_ind``).  Each instance is left out with its subtree.
LEFT_OUT: tuple[type[cst.CSTNode], ...] = (
    cst.BaseParenthesizableWhitespace,  # SimpleWhitespace, ParenthesizedWhitespace
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Comment,
    cst.Newline,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Comma,
    cst.Dot,
    cst.Colon,
    cst.Semicolon,
    cst.AssignEqual,
    cst.ImportStar,
    cst.ParamStar,
    cst.ParamSlash,
    cst.Asynchronous,
)

# Syntax the fixtures may not hold: every field ``walk`` reorders (decorators before names,
# ``async``, parameters of every kind, ``match``, ``except*``, annotations, keywords) and
# every left-out token.
CORNERS = '''\
#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""Module docstring."""
from __future__ import annotations

import os.path as osp, sys
from . import sibling
from ..pkg.mod import (a as b,  # a comment inside brackets
    c,
)
from os import *


@decorator  # trailing comment
@other.decorator(arg, key=value)

async def coroutine(p, /, q: int = 1, *args: str, r, s=2, **kwargs) -> list[int]:
    async with open(p) as f, ctx() as (g, h):
        pass
    async for item in aiter():
        await item
    return [x async for x in agen() if x if not x]


def star_only(*, key=None): ...
def slash_only(a, b, /): return a; b


class Klass(Base, metaclass=Meta, **extra):
    attr: int = 3
    other: str

    @property
    def value(self) -> int:
        return self.attr


lam = lambda x, /, y=1, *z, w, **v: (x, y, z, w, v)
cond = a if b else c
walrus = [y for x in data if (y := f(x)) is not None]
chained = 1 < x <= 2 != y
sliced = seq[1:2, ::3, ...]
mapping = {k: v for k, v in items}, {**d, "k": 1}, {1, 2, *s}
gen = (i for i in range(3) for j in range(i))
call = f(a, *args, key=1, **kwargs)
text = f"{value!r:>{width}} {nested:{'x'}}" "concatenated" r"raw"
total = 1 + \\
    2
x = y = z = 0; x += 1; del x
global_name: dict[str, "Klass"] = {}


def scopes():
    global g
    nonlocal_free = 1

    def inner():
        nonlocal nonlocal_free
        nonlocal_free += 1
        yield from range(3)
        yield

    assert inner, "message"
    return inner


try:
    raise ValueError("bad") from None
except* (TypeError, ValueError) as group:
    pass
else:
    pass
finally:
    pass

try:
    pass
except Exception as error:
    print(error)

with (open("a") as fa, open("b") as fb):
    pass

for index, (left, right) in enumerate(pairs):
    if index:
        continue
    elif left:
        break
    else:
        pass
else:
    pass

while True:
    break
else:
    pass

match command:
    case [Point(x=0, y=0) as origin, *rest] if rest:
        pass
    case {"key": value, **others}:
        pass
    case Klass(1, "a", attr=b) | None:
        pass
    case (1 | 2) as number:
        pass
    case _:
        pass
'''

# Type parameters (PEP 695): libcst parses them whatever the running Python, and the engine
# analyses syntax newer than the running Python.
TYPE_PARAMETERS = """\
def first[T: int, *Ts, **P](items: list[T]) -> T:
    return items[0]


class Box[T](Base):
    pass
"""


def _files() -> list[Path]:
    folders = (REPO_FIXTURES, CASES, CORPUS, PROJECTS)
    return sorted(p for folder in folders for p in folder.rglob("*.py"))


FILES = _files()


def _libcst_nodes(module: cst.Module) -> Iterator[cst.CSTNode]:
    """Every node of the tree by libcst's own ``children``, formatting nodes included."""
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def _kept(node: cst.CSTNode) -> list[cst.CSTNode]:
    return [child for child in node.children if not isinstance(child, LEFT_OUT)]


def _pruned_preorder(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """libcst's pre-order walk below ``node``, not entering the left-out nodes."""
    for child in _kept(node):
        yield child
        yield from _pruned_preorder(child)


def _same(got: Sequence[cst.CSTNode], want: Sequence[cst.CSTNode]) -> bool:
    """The same node objects in the same order (libcst nodes compare by identity anyway;
    ``id`` makes it explicit)."""
    return [id(n) for n in got] == [id(n) for n in want]


def _mismatches(module: cst.Module) -> list[str]:
    out = []
    for node in _libcst_nodes(module):
        if not _same(walk.children(node), _kept(node)):
            got = [type(n).__name__ for n in walk.children(node)]
            want = [type(n).__name__ for n in _kept(node)]
            out.append(f"{type(node).__name__}: walk {got}, libcst {want}")
    return out


def _check(source: str) -> None:
    module = cst.parse_module(source)
    assert _mismatches(module) == []
    # With an index of the tree, ``children`` answers from the index: the same answers.
    index = walk.Index(module)
    try:
        assert _mismatches(module) == []
    finally:
        index.release()
    assert _same(tuple(walk.descendants(module)), list(_pruned_preorder(module)))


def test_left_out_nodes_are_the_ones_walk_documents() -> None:
    assert set(walk._FORMATTING) == set(LEFT_OUT)
    semantic = (cst.BaseExpression, cst.BaseStatement, cst.BaseSmallStatement, cst.BaseSuite)
    assert [t.__name__ for t in LEFT_OUT if issubclass(t, semantic)] == []


def test_real_modules_are_found() -> None:
    names = {p.relative_to(REPO).parts[:2] for p in FILES}
    assert {("fixtures", "demo"), ("tests", "fixtures")} <= names
    assert len(FILES) > 100


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_children_of_every_node_of_a_real_module_are_libcsts(path: Path) -> None:
    _check(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(CORNERS, id="syntax-corners"),
        pytest.param(TYPE_PARAMETERS, id="type-parameters"),
        pytest.param("type Alias[T] = list[T]\n", id="type-alias-statement"),
    ],
)
def test_children_of_every_node_of_syntax_corners_are_libcsts(source: str) -> None:
    _check(source)


def test_the_corners_leave_out_every_kind_of_node() -> None:
    """Not vacuous: each left-out kind occurs among libcst's children of the corners."""
    seen = [
        child
        for source in (CORNERS, TYPE_PARAMETERS)
        for node in _libcst_nodes(cst.parse_module(source))
        for child in node.children
    ]
    missing = [t.__name__ for t in LEFT_OUT if not any(isinstance(c, t) for c in seen)]
    assert missing == []
