"""The trees a process keeps for second analyses (``source.store.TreeStore``): the
files a run expects to analyse again, the ones TensorFlow modules import, are given up last
(without that, a 200k-line tree parsed most of them twice)."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import libcst
import pytest

from tests.cli_support import write_tree
from tests.helpers import dedent
from tflint_graph import Config, lint_paths
from tflint_graph.run.module import analyse_file
from tflint_graph.run.parallel import AnalysisPool
from tflint_graph.run.project import Project
from tflint_graph.source import fromast
from tflint_graph.source.modules import imported_modules
from tflint_graph.source.parse import parse
from tflint_graph.source.store import STORE


def test_imported_modules_reads_the_import_lines() -> None:
    text = (
        b"import a.b as c, d\n"
        b"from .x import (y,\n    z)\n"
        b"from ..p import q as r  # comment\n"
        b"def f():\n    import inner\n"
        b"from m import *\n"
        b"x = 1; import late\n"
    )
    assert imported_modules(text) == {"a.b", "d", ".x", ".x.y", "..p", "..p.q", "inner", "m"}


def test_likely_reached_is_what_tensorflow_modules_import(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/train.py": "import tensorflow\nfrom pkg import helpers\nfrom .ops import f\n",
            "pkg/helpers.py": "def scale(x):\n    return x\n",
            "pkg/ops.py": "def f(x):\n    return x\n",
            "pkg/cli.py": "import pkg.data\n",  # no TensorFlow: its imports do not count
            "pkg/data.py": "ROWS = 3\n",
        },
    )
    files = sorted(tmp_path.rglob("*.py"))
    reached = Project(files, Config(), AnalysisPool(analyse_file, Config())).likely_reached()
    # `from pkg import helpers` runs pkg/__init__.py too
    assert {p.relative_to(tmp_path).as_posix() for p in reached} == {
        "pkg/__init__.py",
        "pkg/helpers.py",
        "pkg/ops.py",
    }


def _source(tag: str) -> str:
    return f"NAME = {tag:>10}\n" + "x = 1\n" * 30  # all of one length


@pytest.fixture
def small_store(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    STORE.clear()
    # Room for four trees (a tree over a quarter of the store is never kept).
    monkeypatch.setattr(STORE, "max_chars", 4 * len(_source("a")) + 10)
    yield
    STORE.clear()


@pytest.mark.usefixtures("small_store")
def test_trees_expected_again_are_given_up_last() -> None:
    with STORE.keeping_first(["kept.py"]):
        parse(_source("kept"), "kept.py")
        for k in range(8):
            parse(_source(f"other{k}"), f"other{k}.py")
        assert _source("kept") in STORE
        assert _source("other0") not in STORE
        # Its second analysis used it: from now on it is kept like any other tree.
        assert STORE.remembered(_source("kept")) is not None
        for k in range(8, 12):
            parse(_source(f"other{k}"), f"other{k}.py")
        assert _source("kept") not in STORE


@pytest.mark.usefixtures("small_store")
def test_a_tree_parsed_again_does_not_push_out_the_others() -> None:
    with STORE.keeping_first([f"kept{k}.py" for k in range(6)]):
        for k in range(6):  # more than the store holds: the last four stay
            parse(_source(f"kept{k}"), f"kept{k}.py")
        parse(_source("kept0"), "kept0.py")  # given up, parsed again
        parse(_source("other"), "other.py")
        assert all(_source(f"kept{k}") in STORE for k in (3, 4, 5))


@pytest.mark.usefixtures("small_store")
def test_preference_ends_with_the_run() -> None:
    with STORE.keeping_first(["kept.py"]):
        parse(_source("kept"), "kept.py")
    assert not STORE.first_sources()
    for k in range(8):
        parse(_source(f"other{k}"), f"other{k}.py")
    assert _source("kept") not in STORE


def test_modules_reached_from_other_modules_are_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``a_*`` module holds traced code of its own (parsed in the first round) and a
    helper that ``c_train``'s tf.function calls (analysed again once the run knows it).  The
    ``b_*`` modules, analysed between them, would push their trees out of a store this small."""
    helper = dedent(
        """
        import tensorflow as tf

        @tf.function
        def own(x):
            return x + 1

        def helper{k}(x):
            print("called from c_train")
            return x * 2
        """
    )
    filler = dedent(
        """
        import tensorflow as tf

        @tf.function
        def filler{k}(x):
            return x - {k}
        """
    )
    tree = {f"a_{k}.py": helper.format(k=k) for k in range(4)}
    tree |= {f"b_{k}.py": filler.format(k=k) * 4 for k in range(8)}
    calls = "".join(f"    x = a_{k}.helper{k}(x)\n" for k in range(4))
    imports = "".join(f"import a_{k}\n" for k in range(4))
    tree["c_train.py"] = (
        f"import tensorflow as tf\n{imports}\n@tf.function\ndef step(x):\n{calls}    return x\n"
    )
    write_tree(tmp_path, tree)
    size = max(len(text) for text in tree.values())
    STORE.clear()
    monkeypatch.setattr(STORE, "max_chars", 4 * len(tree["a_0.py"]) + 4 * size)
    # Trees made, by source: built from CPython's tree (``fromast``) or parsed by libcst.
    parsed: Counter[str] = Counter()
    real_parse, real_build = libcst.parse_module, fromast.build

    def counting(source: str) -> libcst.Module:
        parsed[source] += 1
        return real_parse(source)

    def counting_builds(source: str, tree: ast.Module) -> libcst.Module:
        parsed[source] += 1
        return real_build(source, tree)

    monkeypatch.setattr(libcst, "parse_module", counting)
    monkeypatch.setattr(fromast, "build", counting_builds)
    try:
        findings = list(lint_paths([tmp_path], Config(), jobs=1))
    finally:
        STORE.clear()
    # The helpers were found traced from c_train (their second analysis ran) ...
    assert {Path(f.path).name for f in findings if f.code == "TFG101"} == {
        f"a_{k}.py" for k in range(4)
    }
    # ... without parsing them again.
    assert [parsed[tree[f"a_{k}.py"]] for k in range(4)] == [1, 1, 1, 1]


def test_a_tree_the_stores_hold_is_not_read_for_hints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"a.py": "import tensorflow as tf\nimport b\n", "b.py": "X = 1\n"})

    def unexpected(self: Project) -> set[Path]:
        raise AssertionError("every tree fits: no need to guess which to keep")

    monkeypatch.setattr(Project, "likely_reached", unexpected)
    assert list(lint_paths([tmp_path], Config(), jobs=1)) == []
    monkeypatch.setattr(STORE, "max_chars", 10)
    with pytest.raises(AssertionError, match="every tree fits"):
        list(lint_paths([tmp_path], Config(), jobs=1))
