"""``scopes.ModuleScopes`` answers as libcst's ScopeProvider/QualifiedNameProvider do.

The analysis used libcst's providers until they turned out to be most of its run time; the
single-pass replacement must not change a single answer a rule relies on.  This compares
both, node by node, over every Python file of the fixtures and test corpora, a generated
TensorFlow module, and hand-written corners of Python's scoping rules.
"""

from __future__ import annotations

import sys

import libcst as cst
import pytest
from libcst import metadata as lm

from tests.helpers import CASES, CORPUS, PROJECTS, REPO, REPO_FIXTURES
from tflint_graph.model import scopes, walk

sys.path.insert(0, str(REPO / "bench"))
import generate  # bench/generate.py, a sibling script rather than a package

CORNERS = """
import os.path
import numpy as np, tensorflow as tf
from . import sibling
from ..pkg.mod import thing as alias
from tensorflow import keras, function as tf_function
try:
    import tensorflow.compat.v2 as tf2
except ImportError:
    tf2 = None

x = 1
print(os.path.join("a", "b"), os.getcwd(), np.zeros(3).sum())

def outer(a, b=x, *args, c: int = 2, **kw):
    global x
    x = a
    y = [x for x in range(a) if x > b for z in range(x)]
    g = (i + b for i in args)
    d = {k: v for k, v in kw.items()}
    s = {q for q in y}
    def inner():
        nonlocal y
        y = 3
        return lambda t, u=y: t + u + c
    class K(tf.Module):
        attr = x
        def method(self, v=attr):
            return attr, x, self.attr
    del d
    for i, (j, *k) in enumerate(y):
        print(i, j, k)
    else:
        pass
    with open("f") as fh, open("g") as (gh):
        fh.write(gh.read())
    try:
        pass
    except (ValueError, TypeError) as err:
        raise err
    if (n := len(y)) > 2:
        x += n
    tf.print(tf_function, keras.layers.Dense(3)(a)[0].numpy(), sibling, alias)
    return inner, K, g, s

@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def step(t: "tf.Tensor") -> tf.Tensor:
    print = tf.print
    print(t)
    self = None
    self.count = 1
    values = []
    values.append(t)
    values[0] += 1
    return tf.reduce_sum(t, axis=len(values))

match step:
    case {"key": value, **rest}:
        pass
    case [first, *others] if first:
        pass
    case K(attr=val) | None as bound:
        pass

lambda_ = lambda *a, **k: (a, k, x)
"""


def _sources() -> list[tuple[str, str]]:
    found = [("corners", CORNERS), ("generated", generate.tf_module(400, 3))]
    for folder in (REPO_FIXTURES, CASES, CORPUS, PROJECTS, REPO / "tflint_graph"):
        for path in sorted(folder.rglob("*.py")):
            found.append((path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8")))
    return found


SOURCES = _sources()


def _describe(assignments: object) -> set[tuple[str, int]]:
    return {
        (type(a).__name__, id(getattr(a, "node", None)))
        for a in assignments  # type: ignore[attr-defined]
    }


@pytest.mark.parametrize("name,source", SOURCES, ids=[n for n, _ in SOURCES])
def test_same_answers_as_libcst(name: str, source: str) -> None:
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        pytest.skip("not parseable by libcst")
    wrapper = lm.MetadataWrapper(module, unsafe_skip_copy=True)
    theirs = wrapper.resolve(lm.ScopeProvider)
    qualified = wrapper.resolve(lm.QualifiedNameProvider)
    ours = scopes.ModuleScopes(module)

    # Every semantic node libcst places in a scope has the same kind of scope, belonging
    # to the same node.  (libcst leaves out a few more: the first argument of TypeVar().)
    nodes = [module, *walk.descendants(module)]
    for node in nodes:
        a, b = theirs.get(node), ours.scope(node)
        if a is None:
            continue
        assert b is not None, (name, node)
        assert type(a).__name__ == type(b).__name__, (name, node)
        assert getattr(a, "node", None) is b.node, (name, node)

    for node in nodes:
        if not isinstance(node, cst.Name) or ours.scope(node) is None:
            continue
        a, b = theirs[node], ours.scope(node)
        assert a is not None and b is not None
        # What the name may be bound to there ...
        assert _describe(a[node.value]) == _describe(b[node.value]), (name, node.value)
        # ... and what it denotes: the resolver keeps imported and builtin names.
        value = qualified.get(node, set())
        value = value() if callable(value) else value
        expected = {(q.name, q.source.name) for q in value if q.source.name != "LOCAL"}
        got = {(n, s.name) for n, s in ours.qualified_names(node) if s.name != "LOCAL"}
        assert got == expected, (name, node.value)
        has_local = any(q.source.name == "LOCAL" for q in value)
        assert has_local == any(s.name == "LOCAL" for _, s in ours.qualified_names(node))

    # Loads per scope and per binding (libcst also counts names inside string
    # annotations, which this analysis does not parse).
    def loads(accesses: object) -> set[int]:
        return {
            id(acc.node)
            for acc in accesses  # type: ignore[attr-defined]
            if not isinstance(acc.node, cst.BaseString)
        }

    pairs = {}
    for node in nodes:
        a, b = theirs.get(node), ours.scope(node)
        if a is not None and b is not None:
            pairs[id(a)] = (a, b)
    for a, b in pairs.values():
        names = {acc.node.value for acc in a.accesses if isinstance(acc.node, cst.Name)}
        for n in names:
            assert loads(a.accesses[n]) == loads(b.accesses[n]), (name, n)
        for assignment in a.assignments:
            if not isinstance(assignment, lm.Assignment):
                continue
            mine = [
                m
                for m in b._assignments.get(assignment.name, ())
                if getattr(m, "node", None) is assignment.node
            ]
            assert len(mine) == 1, (name, assignment.name)
            assert loads(assignment.references) == loads(mine[0].references), (
                name,
                assignment.name,
            )
