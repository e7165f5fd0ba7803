"""Positions computed one statement at a time are libcst's, for every node.

``positions.Positions`` generates code only for the statement around a node and trusts
CPython for where that statement starts; this compares every node's range with libcst's
``PositionProvider`` over the fixtures, test corpora, the package itself, a generated
TensorFlow module and formatting corners (decorators, comments, tabs, CRLF, continuation
lines, nested classes, one-line bodies).
"""

from __future__ import annotations

import ast
import random
import sys

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from tests.helpers import CASES, CORPUS, REPO, REPO_FIXTURES
from tflint_graph.model import walk
from tflint_graph.model.positions import Positions

sys.path.insert(0, str(REPO / "bench"))
import generate  # bench/generate.py, a sibling script rather than a package

CORNERS = {
    "decorators-comments": (
        "# header\n\nimport tensorflow as tf\n\n\n# a comment\n@tf.function(\n"
        "    jit_compile=True)\n# between\n@other\ndef f(x):\n    # inside\n\n"
        "    return x  # trailing\n\n\nclass A:\n    '''doc'''\n    @staticmethod\n"
        "    def g(y): return lambda z: (\n        z + y)\n\n    class B:\n"
        "        def h(self):\n            if self:\n                def k(): pass\n"
        "            return 1\n"
    ),
    "tabs": "def f(x):\n\tif x:\n\t\treturn [\n\t\t\tx]\n\treturn 2\n",
    "crlf": "import os\r\n\r\ndef f(x):\r\n    y = x; z = y\r\n    return z\r\n",
    "continuation": "x = 1 + \\\n    2\ndef f(a,\n      b):\n    return a + \\\n        b\n",
    "one-line-bodies": "class A: pass\ndef f(): return 1\nif True: x = 1\nelse: x = 2\n",
    "async-unicode": (
        "async def f(é):\n    s = 'ünï'; t = 2\n    async with a as b:\n        await b\n"
    ),
    "nested-blocks": (
        "def f(xs):\n    for x in xs:\n        # loop\n        if x:\n            try:\n"
        "                y = g(x)  # call\n            except (KeyError,\n"
        "                    ValueError) as e:\n\n                y = e\n"
        "            except Exception:\n                raise\n            else:\n"
        "                y += 1; z = 2\n            finally:\n                done()\n"
        "        elif x is None:\n            while x:\n                x -= 1\n"
        "            else:\n                pass\n        else:\n"
        "            with open(x) as fh, lock:\n                fh.read()\n"
        "    else:\n        return [\n            1]\n"
        "async def h():\n    async for a in b():\n        async with c:\n"
        "            if a: await a\n"
        "if __name__ == '__main__':\n\tmain()\n"
    ),
    "empty": "",
    "comment-only": "# nothing\n",
}


def _parents(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    index = walk.Index(module)
    index.release()  # the parents stay; only walk.children stops answering from it
    return index.parents


def _sources() -> list[tuple[str, str]]:
    found = [*CORNERS.items(), ("generated", generate.tf_module(600, 5))]
    for folder in (REPO_FIXTURES, CASES, CORPUS, REPO / "tflint_graph"):
        for path in sorted(folder.rglob("*.py")):
            found.append((path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8")))
    return found


SOURCES = _sources()


@pytest.mark.parametrize("name,source", SOURCES, ids=[n for n, _ in SOURCES])
def test_positions_match_libcst(name: str, source: str) -> None:
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = list(walk.descendants(module))
    # Ask in a random order, as rules do, so statements are generated in any order.
    random.Random(0).shuffle(nodes)
    positions = Positions(module, source, _parents(module), ast.parse(source))
    for node in nodes:
        assert positions[node] == expected[node], (name, type(node).__name__)
    # The point: the whole module was never generated for these sources.
    assert not positions._whole, name
    # Start and end lines of statements come from CPython's tree when nothing has been
    # generated yet: they too must be libcst's.
    lines = Positions(module, source, _parents(module), ast.parse(source))
    for node in nodes:
        assert lines.start_line(node) == expected[node].start.line, (name, node)
        assert lines.end_line(node) == expected[node].end.line, (name, node)


def test_a_disagreement_falls_back_to_the_whole_module() -> None:
    # CPython places this decorator on the line of `deco`, not of `@`: the generated
    # statement then disagrees with CPython on the `def` line, and every position comes
    # from the whole module instead.
    source = "x = 1\n@(\n    deco\n)\ndef f():\n    return 1\n"
    module = cst.parse_module(source)
    positions = Positions(module, source, _parents(module), ast.parse(source))
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    inner = module.body[1].body.body[0]
    assert positions[inner] == expected[inner]  # its own statement: CPython is right there
    assert not positions._whole
    assert positions[module.body[1]] == expected[module.body[1]]
    assert positions._whole


def test_a_node_in_a_nested_block_generates_only_its_own_statement() -> None:
    # A finding deep in a loop must not make the whole function's code be generated again.
    source = CORNERS["nested-blocks"]
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module, source, _parents(module), ast.parse(source))
    calls = [n for n in walk.descendants(module) if isinstance(n, cst.Call)]
    call = next(c for c in calls if cst.Module([]).code_for_node(c) == "done()")
    assert positions[call] == expected[call]
    [generated] = positions._done  # for / if / try / finally / the statement
    assert cst.Module([]).code_for_node(generated).strip() == "done()"
