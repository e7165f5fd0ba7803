"""Trees built from CPython's (``fromast``) are libcst's, formatting aside.

Every rule reads the engine's trees, so a built tree must hold the nodes libcst's parser
gives, field for field (node types, names, literal text, operators, the order of call
arguments, ``elif`` against ``else: if``, one-line bodies, small statements sharing a
line), over the fixtures, the test corpora, the package itself, a generated TensorFlow
module and a list of syntax forms.  Positions and code of built trees come from libcst's
parse of the statement around a node (``positions.Snippets``): they too must be libcst's,
for every node.  End to end, runs give the same findings either way.
"""

from __future__ import annotations

import ast
import dataclasses
import random
import sys
from pathlib import Path

import libcst as cst
import pytest
from libcst._nodes.base import CSTCodegenError
from libcst.metadata import MetadataWrapper, PositionProvider

from tests.helpers import CASES, CORPUS, PROJECTS, REPO, REPO_FIXTURES
from tflint_graph.api import lint_paths, lint_source
from tflint_graph.core.config import Config
from tflint_graph.core.finding import Finding
from tflint_graph.model import walk
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.positions import Snippets
from tflint_graph.source import fromast
from tflint_graph.source.parse import nodes_unchecked, parse
from tflint_graph.source.store import STORE

sys.path.insert(0, str(REPO / "bench"))
import generate  # bench/generate.py, a sibling script rather than a package

FORMS = {
    "statements": (
        "import a.b.c as d, e\nfrom . import x\nfrom ..m import (y as z,\n    w)\n"
        "from m import *\nglobal g\nx = y = 1; del a, b; del (c)\na, *b = c\n"
        "x: int = 1\ny: 'T'\nx += 1; x @= m; x //= 2; x **= 3\nassert x, 'msg'\n"
        "raise E from e\nraise\nif a: pass\nelif b: pass\nelse:\n    if c: pass\n"
        "if a:\n    pass\nelse:\n    if b:\n        pass\n"
        "for i in range(3): continue\nelse: pass\nwhile x:\n    break\nelse:\n    pass\n"
        "with a as b, c as (d, e): pass\ntry:\n    pass\nexcept (A, B) as e:\n    pass\n"
        "except C:\n    pass\nelse:\n    pass\nfinally:\n    pass\n"
        "try:\n    pass\nexcept* ValueError:\n    pass\n"
    ),
    "definitions": (
        "@a.b(c)\n@d\nclass K(B, *bs, metaclass=M, **kw):\n    '''doc'''\n    x = 1\n"
        "    def m(self, a, /, b=1, *args, c, d=2, **kw) -> int:\n        nonlocal q\n"
        "        return (yield)\n    async def n(self, *, k):\n"
        "        async with x: pass\n        async for i in y: await i\n"
        "        return [i async for i in z]\n"
        "def g(a, b, /): yield from h()\nlambda: 0\nlambda x, *y, z=1, **w: x\n"
    ),
    "expressions": (
        "x = a and b and c or not d\ny = a < b <= c != d is not e not in f in g is h\n"
        "z = -a + +b * ~c / d // e % f ** g << h >> i & j | k ^ l @ m\n"
        "f(a, *b, c=1, **d)\nf(k=1, *rest)\nf(x for x in y)\nf(**a, b=2)\n"
        "t = (1,), (), [1, *a], {1, 2}, {**a, 'k': v}, {}\n"
        "c = [x for x in y if x if not x for z in x], {k: v for k, v in d}, {s for s in t}\n"
        "s = a[1], a[1:2], a[::3], a[1:2, ::], a[(1, 2)], a[(i), j], a[i,], a[...]\n"
        "v = (x := 5), a if b else c, a.b.c(d).e[f]\n"
        "n = 0x1F, 1_000, 1.5e3, 2j, True, False, None, ...\n"
        "s = 'a', \"b\", '''c''', r'\\d', b'x', u'y', 'a' 'b', ('a'\n     'b'), f'{x!r:>{w}}'\n"
        "q = 'it''s', 'x' f'{y}', rb'\\x'\n"
    ),
    "layout": (
        "def f(x):\n\tif x:\n\t\treturn [\n\t\t\tx]\n\treturn 2\n"
        "x = 1 + \\\n    2\nclass A: pass\ndef h(): return 1\n"
        "def k():\n    a = 1; b = (2,\n        3); c = 3\n    return a\n"
        "async def u(é):\n    s = 'ünï'; t = 2\n"
    ),
    "empty": "",
    "comment-only": "# nothing\n",
}


def _sources() -> list[tuple[str, str]]:
    found = [*FORMS.items(), ("generated", generate.tf_module(600, 7))]
    for folder in (REPO_FIXTURES, CASES, CORPUS, PROJECTS, REPO / "tflint_graph"):
        for path in sorted(folder.rglob("*.py")):
            found.append((path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8")))
    return found


SOURCES = _sources()


def _difference(ours: object, theirs: object, where: str) -> str | None:
    """Where ``ours`` and ``theirs`` differ in a semantic field, or None."""
    if type(ours) is not type(theirs):
        return f"{where}: {type(ours).__name__} != {type(theirs).__name__}"
    if not isinstance(ours, cst.CSTNode):
        return None if ours == theirs else f"{where}: {ours!r} != {theirs!r}"
    if isinstance(ours, walk._FORMATTING):
        return None
    for field in dataclasses.fields(ours):  # type: ignore[arg-type]
        name = field.name
        if name in walk._NOT_CHILDREN or name.startswith("whitespace") or name.endswith("colon"):
            continue
        mine, other = getattr(ours, name), getattr(theirs, name)
        if isinstance(mine, list | tuple) and isinstance(other, list | tuple):
            if len(mine) != len(other):
                return f"{where}.{name}: {len(mine)} items != {len(other)}"
            for i, (a, b) in enumerate(zip(mine, other, strict=True)):
                found = _difference(a, b, f"{where}.{name}[{i}]")
                if found:
                    return found
            continue
        found = _difference(mine, other, f"{where}.{name}")
        if found:
            return found
    return None


def _build(source: str) -> cst.Module:
    with nodes_unchecked(cst.CSTNode):
        return fromast.build(source, ast.parse(source))


@pytest.mark.parametrize("name,source", SOURCES, ids=[n for n, _ in SOURCES])
def test_built_tree_is_libcsts(name: str, source: str) -> None:
    built = _build(source)
    assert fromast.is_built(built)
    assert _difference(built, cst.parse_module(source), "module") is None


_BLOCKS = (
    cst.BaseCompoundStatement,
    cst.BaseSuite,
    cst.Else,
    cst.Finally,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
)


def _pairs(built: cst.CSTNode, real: cst.CSTNode) -> list[tuple[cst.CSTNode, cst.CSTNode]]:
    found, stack = [], [(built, real)]
    while stack:
        ours, theirs = stack.pop()
        found.append((ours, theirs))
        stack.extend(zip(walk._children(ours), walk._children(theirs), strict=True))
    return found


@pytest.mark.parametrize(
    "name,source", SOURCES[:: 3 if len(SOURCES) > 60 else 1], ids=lambda v: str(v)[:40]
)
def test_positions_and_code_of_built_trees_are_libcsts(name: str, source: str) -> None:
    built, real = _build(source), cst.parse_module(source)
    expected = MetadataWrapper(real, unsafe_skip_copy=True).resolve(PositionProvider)
    index = walk.Index(built)
    try:
        snippets = Snippets(built, source, index.parents, ast.parse(source))
        pairs = _pairs(built, real)[1:]  # not the module: its code is the whole file
        # Asked in any order, as rules do: a parameter before its def, a def after its body.
        random.Random(0).shuffle(pairs)
        for ours, theirs in pairs:
            assert snippets[ours] == expected[theirs], (name, type(ours).__name__)
            if isinstance(theirs, _BLOCKS):
                continue  # their code runs on to the comments after their last statement
            if getattr(theirs, "leading_lines", None):
                theirs = theirs.with_changes(leading_lines=())
            try:
                code = real.code_for_node(theirs)
            except CSTCodegenError:  # libcst writes an annotation only with its owner
                with pytest.raises(CSTCodegenError):
                    snippets.code(ours)
                continue
            assert snippets.code(ours) == code, (name, ours)
        # Statements are parsed one at a time: the whole module never is.
        assert not snippets._whole or not pairs, name
    finally:
        index.release()


def test_a_node_in_a_def_header_parses_only_the_header() -> None:
    source = (
        "class A:\n    @deco(1)\n    def f(self, x: int = 2,\n          *, y) -> None:\n"
        '        """doc"""\n        return x\n'
    )
    built, real = _build(source), cst.parse_module(source)
    expected = MetadataWrapper(real, unsafe_skip_copy=True).resolve(PositionProvider)
    index = walk.Index(built)
    try:
        snippets = Snippets(built, source, index.parents, ast.parse(source))
        fn = built.body[0].body.body[0]  # type: ignore[attr-defined]
        theirs = real.body[0].body.body[0]  # type: ignore[attr-defined]
        for ours, other in [
            (fn.params.kwonly_params[0], theirs.params.kwonly_params[0]),
            (fn.decorators[0], theirs.decorators[0]),
            (fn.returns, theirs.returns),
        ]:
            assert snippets[ours] == expected[other]
        assert snippets._headers == {fn} and not snippets._done
        param = theirs.params.params[1]
        assert snippets.code(fn.params.params[1]) == real.code_for_node(param)
        # The def itself runs to the end of its body: that needs the whole statement.
        assert snippets[fn] == expected[theirs]
        assert snippets._done == {fn}
    finally:
        index.release()


def test_code_of_a_statement_starts_at_the_statement() -> None:
    source = "def f():\n    # why\n\n    x = g()  # now\n"
    for module in (_build(source), cst.parse_module(source)):
        ctx = ModuleContext("m.py", source, module, Config())
        try:
            stmt = module.body[0].body.body[0]  # type: ignore[attr-defined]
            assert ctx.code(stmt) == "x = g()  # now\n"
        finally:
            ctx.release()


@pytest.mark.parametrize(
    "source",
    [
        "match x:\n    case 1:\n        pass\n",
        "with (open(a) as b, open(c) as d):\n    pass\n",
        "import os\r\n\r\ndef f(x):\r\n    return x\r\n",
        "x = 1\n\x0cy = 2\n",
    ],
    ids=["match", "parenthesised-with", "crlf", "form-feed"],
)
def test_source_not_rebuilt_is_parsed_by_libcst(source: str) -> None:
    with pytest.raises(fromast.Unsupported):
        fromast.build(source, ast.parse(source))
    STORE.clear()
    parsed = parse(source, "m.py")
    assert isinstance(parsed, cst.Module) and not fromast.is_built(parsed)


def test_the_engine_analyses_built_trees() -> None:
    STORE.clear()
    source = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n    return x\n"
    parsed = parse(source, "m.py")
    assert isinstance(parsed, cst.Module) and fromast.is_built(parsed)
    [finding] = lint_source(source)
    assert (finding.code, finding.line, finding.column) == ("TFG101", 5, 5)


def test_a_tree_libcst_cannot_pair_is_analysed_from_libcsts_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n    return x\n"
    monkeypatch.setattr(Snippets, "_pair", lambda self, *args: False)
    STORE.clear()
    [finding] = lint_source(source)
    assert (finding.code, finding.line, finding.column) == ("TFG101", 5, 5)
    remembered = parse(source, "m.py")
    assert isinstance(remembered, cst.Module) and not fromast.is_built(remembered)


def _run(paths: list[Path]) -> list[Finding]:
    return list(lint_paths(paths, Config(), cache=False))


@pytest.mark.parametrize(
    "root",
    [REPO_FIXTURES, CASES, CORPUS, PROJECTS],
    ids=lambda p: p.name,
)
def test_runs_are_the_same_with_libcsts_parser(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    STORE.clear()
    built = _run([root])
    monkeypatch.setenv("TFLINT_GRAPH_LIBCST_PARSE", "1")
    STORE.clear()
    assert _run([root]) == built
