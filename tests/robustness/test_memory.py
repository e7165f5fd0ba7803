"""Memory comes back without cyclic garbage collection.

The CLI runs with the cyclic collector off (``cli.entry``; ``run.gc_pause`` for any
``lint_paths`` run): an analysis that left reference cycles behind would keep every tree
it parsed until the next forced collection.  These tests lint real modules with the
collector off and check that nothing they allocated is left as cyclic garbage.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tests.helpers import CORPUS, DEMO, REPO_FIXTURES
from tflint_graph import lint_paths, lint_source
from tflint_graph.source.store import STORE

SOURCES = sorted(REPO_FIXTURES.rglob("*.py")) + sorted(CORPUS.rglob("*.py"))


BAD_SOURCES = (
    "import tensorflow as tf\n\n@tf.function\ndef f(x:\n    print(x)\n",
    "import tensorflow as tf\nprint 'python 2'\n",
    "import tensorflow as tf\nx = (" + "(" * 300 + ")" * 300 + ")\n",
    "import tensorflow as tf\nnonlocal x\n",
)


@pytest.fixture
def cyclic_garbage() -> Iterator[list[object]]:
    """Objects that only the cyclic collector could free, allocated inside the test."""
    garbage: list[object] = []
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield garbage
    finally:
        gc.collect()
        garbage.extend(gc.garbage)
        gc.garbage.clear()
        gc.set_debug(0)
        if was:
            gc.enable()


def _ours(garbage: list[object]) -> list[str]:
    """Type names of garbage that the analysis (or libcst for it) allocated."""
    return sorted(
        {
            type(o).__module__ + "." + type(o).__qualname__
            for o in garbage
            if type(o).__module__.startswith(("tflint_graph", "libcst"))
        }
    )


def test_sources_exist() -> None:
    assert len(SOURCES) > 20


def test_analysing_modules_leaves_no_cyclic_garbage(cyclic_garbage: list[object]) -> None:
    STORE.clear()
    found = 0
    for path in SOURCES:
        found += len(lint_source(path.read_text(encoding="utf-8"), str(path)))
    # Sources CPython rejects: the error is kept (without its traceback) in the verdict.
    for bad in BAD_SOURCES:
        assert [f.code for f in lint_source(bad)] == ["TFG001"]
    STORE.clear()  # the per-process tree store may keep trees: drop them too
    gc.collect()
    assert found > 0  # the modules were really analysed
    assert _ours(gc.garbage) == []


def test_a_project_run_leaves_no_cyclic_garbage(cyclic_garbage: list[object]) -> None:
    STORE.clear()
    findings = list(lint_paths([DEMO]))
    STORE.clear()
    gc.collect()
    assert findings
    assert _ours(gc.garbage) == []


def test_the_collector_is_back_on_after_a_run() -> None:
    assert gc.isenabled()
    list(lint_paths([DEMO]))
    lint_source("import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n")
    assert gc.isenabled()


def test_a_second_analysis_reuses_what_the_first_prepared() -> None:
    """The tree, its index and scopes are kept for the module's next analysis (another
    module's traced code may reach it); the results are those of a fresh analysis."""
    STORE.clear()
    source = (DEMO / "train.py").read_text(encoding="utf-8")
    first = lint_source(source, "train.py")
    prepared = STORE.take_prepared(source)
    assert prepared is not None
    STORE.keep_prepared(source, prepared)
    assert lint_source(source, "train.py") == first
    assert STORE.take_prepared(source) is prepared
    STORE.keep_prepared(source, prepared)
    STORE.clear()
    assert STORE.prepared_sources() == []
    assert lint_source(source, "train.py") == first
    STORE.clear()
