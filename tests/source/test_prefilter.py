"""The prefilter changes nothing but speed.

A module that cannot hold traced code (no TensorFlow, or TensorFlow without anything that
could be traced) and that no other module reaches is summarized from CPython's ``ast``
instead of libcst.  ``TFLINT_GRAPH_NO_PREFILTER=1`` restores the libcst path;
every test here compares both, on the fixtures and on a generated corpus.
"""

from __future__ import annotations

import ast
import dataclasses
import random
from pathlib import Path

import libcst as cst
import pytest

from tests.helpers import CASES, CORPUS, PROJECTS, REPO_FIXTURES, dedent
from tflint_graph.api import lint_paths
from tflint_graph.core.config import Config
from tflint_graph.core.facts import ModuleSummary, ProjectView
from tflint_graph.core.finding import Finding
from tflint_graph.model.context import ModuleContext
from tflint_graph.run import summary
from tflint_graph.run.dispatch import rule_triggers
from tflint_graph.run.module import analyse_file, analyse_source
from tflint_graph.source import prefilter
from tflint_graph.source.prefilter import enabled as prefilter_enabled
from tflint_graph.traced import find_traced, traced_of

FIXTURE_DIRS = [REPO_FIXTURES, CASES, CORPUS]
PROJECT_DIRS = sorted(p for p in PROJECTS.iterdir() if p.is_dir())
ALL_FILES = sorted(p for d in [*FIXTURE_DIRS, *PROJECT_DIRS] for p in d.rglob("*.py"))

EDGE_CASES = """\
import a.b.c, d as e, f.g as h
from . import x
from .. import y as z
from .m import (p, q as r)
from ...deep.mod import s
from mod import *
from ..mod import *
import os; from os import path as P
class A(*bases, metaclass=M, **kw): pass
class B(A, e.Base, h.K[int], x().y, Generic[T], (e).Q): pass
class C(B, A.inner): pass
@deco(h.make())
class D: pass
if x:
    import hidden
def f():
    import notmodule
    e.call(); h(); x.y.z(); (x).w(); r()(); f"{z.q()}"; s.t(a=e.u())
    lambda: p.go()
"""

VIEWS = [
    ProjectView(),
    ProjectView(module="pkg.sub.mod"),
    ProjectView(module="pkg.sub", is_package=True),
]


def _without_prefilter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFLINT_GRAPH_NO_PREFILTER", "1")
    assert not prefilter_enabled()


@pytest.mark.parametrize("source", [EDGE_CASES, *(p.read_text("utf-8") for p in ALL_FILES)])
def test_ast_twins_match_the_libcst_tables(source: str) -> None:
    tree, module = ast.parse(source), cst.parse_module(source)
    for view in VIEWS:
        imports = summary.module_imports(module, view)
        twin = prefilter.module_imports(tree, view)
        assert list(twin.items()) == list(imports.items())
        assert prefilter.module_classes(tree, imports) == summary.module_classes(module, imports)
        assert prefilter.called_imports(tree, view) == summary.called_imports(module, view)


def _analyse_all(files: list[Path], config: Config) -> list[tuple[Path, object]]:
    results: list[tuple[Path, object]] = []
    for path in files:
        for view in (None, VIEWS[1]):
            findings, found = analyse_file(path, config, str(path), view)
            # What the full analysis looked up and which bases it would inherit guard values
            # through only matter once the run tells the module guard values, and then it
            # gets the full analysis anyway: the summary from CPython's tree names neither.
            if found is not None:
                found = dataclasses.replace(found, asked_tracing=frozenset(), guard_classes=())
            results.append((path, (findings, found)))
    return results


def test_every_fixture_file_gives_the_same_findings_and_summary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = Config()
    fast = _analyse_all(ALL_FILES, config)
    _without_prefilter(monkeypatch)
    assert _analyse_all(ALL_FILES, config) == fast


def _run(paths: list[Path]) -> list[Finding]:
    return list(lint_paths(paths, Config(), cache=False))


@pytest.mark.parametrize("root", [*FIXTURE_DIRS, *PROJECT_DIRS], ids=lambda p: p.name)
def test_runs_over_the_fixtures_are_identical(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _run([root])
    _without_prefilter(monkeypatch)
    assert _run([root]) == fast


# -- a generated corpus ------------------------------------------------------------------------

TF_MODULE = """\
import tensorflow as tf
from {pkg}.{helper} import {fn}
from {pkg} import {other}
from {pkg}.tfdata_{d} import scale_{d}


@tf.function
def step_{i}(x):
    y = scale_{d}({fn}(x))
    return {other}.{fn2}(y)


class Net{i}(tf.keras.Model):
    def call(self, x):
        return {fn}(x)


def train_{i}(data):
    for batch in data:
        step_{i}(batch)
"""

HELPER_MODULE = """\
import random
import time
{imports}


def {fn}(x):
    print("value", x)
    return x * random.random()


def {fn2}(x):
    started = time.time()
    return x + started


class Base{i}{bases}:
    def go(self, n):
        return [{fn}(k) for k in range(n)]
"""

# TensorFlow modules with nothing to trace of their own: summarised from CPython's tree
# unless traced code reaches them (tfdata_0 and tfdata_1 are reached, tfdata_2 is not).
TFDATA_MODULE = """\
import tensorflow as tf
{imports}
SCALE = tf.constant({i}.5)
TABLE = [1, 2, 3] * {i}


def scale_{i}(x):
    print("scaling", x)
    return x * SCALE + tf.reduce_sum(TABLE)
"""

CALLER_MODULE = """\
from {pkg}.tfmod_{j} import step_{j}, Net{j}


class Sub{i}(Net{j}):
    def call(self, x):
        print(x)
        return x


def loop():
    for k in range(10):
        step_{j}(k)
        step_{j}(float(k))
"""


def _generate(root: Path, seed: int) -> None:
    rng = random.Random(seed)
    for p in range(2):
        pkg = f"gen{seed}_{p}"
        folder = root / pkg
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("from .helper_0 import fn_0\n")
        helpers = 4
        for i in range(helpers):
            imports = rng.choice(["", "import os", f"from .helper_{(i + 1) % helpers} import *"])
            bases = rng.choice(["", f"(helper_{i})", "(object)"])
            (folder / f"helper_{i}.py").write_text(
                HELPER_MODULE.format(
                    fn=f"fn_{i}", fn2=f"fn2_{i}", i=i, imports=imports, bases=bases
                )
            )
        for i in range(4):
            h = rng.randrange(helpers)
            (folder / f"tfmod_{i}.py").write_text(
                TF_MODULE.format(
                    pkg=pkg,
                    helper=f"helper_{h}",
                    fn=f"fn_{h}",
                    other=f"helper_{h}",
                    fn2=f"fn2_{h}",
                    i=i,
                    d=rng.randrange(2),
                )
            )
        for i in range(3):
            imports = rng.choice(["", "import numpy as np", f"from .tfdata_{(i + 1) % 3} import *"])
            (folder / f"tfdata_{i}.py").write_text(TFDATA_MODULE.format(i=i, imports=imports))
        for i in range(3):
            (folder / f"caller_{i}.py").write_text(
                CALLER_MODULE.format(pkg=pkg, i=i, j=rng.randrange(4))
            )
        (folder / "broken.py").write_text(rng.choice(["def f(:\n", 'print "x"\n', "x = (\n"]))
        (folder / "nonlocal_top.py").write_text("nonlocal x\n")
        (folder / "plain.py").write_text("import json\n\n\ndef load(p):\n    return json.load(p)\n")


@pytest.mark.parametrize("seed", [1, 2])
def test_generated_corpus_is_identical(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _generate(tmp_path, seed)
    fast = _run([tmp_path])
    files = sorted(tmp_path.rglob("*.py"))
    fast_files = _analyse_all(files, Config())
    # The corpus exercises what the prefilter must not lose: helpers without TensorFlow
    # reached from traced code, callers of imported tf.functions, syntax errors.
    codes = {(Path(f.path).name.split("_")[0], f.code) for f in fast}
    assert {
        ("helper", "TFG101"),
        ("broken.py", "TFG001"),
        ("caller", "TFG101"),
        ("tfdata", "TFG101"),
    } <= codes
    _without_prefilter(monkeypatch)
    assert _run([tmp_path]) == fast
    assert _analyse_all(files, Config()) == fast_files


def test_prefiltered_summary_is_the_libcst_one(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(EDGE_CASES)
    findings, summary = analyse_file(path, Config(), "m.py", VIEWS[1])
    assert findings == []
    assert isinstance(summary, ModuleSummary)
    assert summary.reexports["z"] == "pkg.y"
    assert "pkg.sub.m.q" in summary.called_imports


# The prefilter's words with every rule enabled (the default selection).
_WORDS = prefilter.triggers(rule_triggers(Config(), "pkg/mod.py"))


def _may_hold(tree: ast.Module, words: prefilter.Triggers = _WORDS) -> bool:
    return prefilter.may_hold_traced(prefilter.Scan(tree, ProjectView(module="pkg.mod")), words)


def test_every_dataset_callback_method_keeps_a_module_in_full_analysis() -> None:
    # The prefilter must keep every module that hands a function to tf.data in full analysis.
    from tflint_graph.core.vocabulary import (
        ALWAYS_TRACING,
        DATASET_CALLBACK_METHODS,
        DATASET_EXPERIMENTAL,
    )

    for method in DATASET_CALLBACK_METHODS:
        source = f"import tensorflow as tf\nds = make()\nds = ds.{method}(f)\n"
        assert _WORDS.text.search(source), method
        assert _may_hold(ast.parse(source)), method
    for name in DATASET_EXPERIMENTAL:
        for source in (
            f"from tensorflow.data.experimental import {name}\nds.apply({name}(f))\n",
            f"from tensorflow.data.experimental import {name} as x\nds.apply(x(f))\n",
            f"import tensorflow as tf\nds.apply(tf.data.experimental.{name}(f))\n",
        ):
            assert _WORDS.text.search(source), name
            assert _may_hold(ast.parse(source)), source
    for name in ALWAYS_TRACING:
        last = name.rsplit(".", 1)[-1]
        assert _may_hold(ast.parse(f"y = {last}(f)\n")), name


@pytest.mark.parametrize(
    "code",
    [
        "@tf.function\ndef f(x):\n    return x\n",
        "from tensorflow import function as compiled\n",
        "from tensorflow.python.eager import def_function\nstep = def_function.function(f)\n",
        "tf.config.run_functions_eagerly(True)\n",
        "class Net(tf.keras.Model):\n    pass\n",
        "from tensorflow import keras\nclass Net(keras.Model):\n    pass\n",
        "import tf_keras as K\nclass Net(K.layers.Layer):\n    pass\n",
        "model.compile(loss=my_loss)\n",
        "tf.saved_model.save(m, path)\n",
        "model.save(path, signatures=fns)\n",
        "archive.add_endpoint('serve', fn)\n",
        "from tensorflow.python.keras.engine import base_layer\nclass L(base_layer.Layer): ...\n",
        "from tensorflow.python.eager import def_function\n@def_function.function\ndef f(x): ...\n",
        "import tensorflow.compat.v1 as v1\nstep = v1.function(f)\n",
        "def main():\n    from tensorflow import function\n    return function(f)\n",
        "fast = functools.partial(tf.function, jit_compile=True)\n",
        "tf.config.experimental_run_functions_eagerly(True)\n",
        "y = tf.vectorized_map(f, xs)\n",
        "ds = ds.reduce(0, add)\n",
    ],
)
def test_code_that_may_be_traced_or_exported_is_analysed_fully(code: str) -> None:
    assert _may_hold(ast.parse("import tensorflow as tf\n" + code))


@pytest.mark.parametrize(
    "code",
    [
        '"""A function that maps a dataset; see tf.function and keras."""\n',
        "# tf.function would retrace here\nx = tf.reduce_sum(tf.ones([3]))\n",
        "class Counter(tf.Module):\n    def __call__(self, x):\n        return tf.scan_it(x)\n",
        "y = tf.reduce_mean(x, axis=0)  # reduce, map, filter\n",
        "message = 'Dataset.map(fn) callback'\n",
        "pairs = list(map(str, filter(None, xs)))\n",
        "from agents.utils import common\n@common.function\ndef train(x): ...\n",
        "ok = inspect.isfunction(f) or callable(function)\n",
        "from functools import reduce\ntotal = reduce(add, xs)\n",
        "@register_keras_serializable()\ndef act(x):\n    return x\n",
        "init = tf.keras.initializers.GlorotUniform()\n",
        "class Init(tf.keras.initializers.Initializer):\n    pass\n",
        "from tensorflow import keras\nclass Stop(keras.callbacks.Callback):\n    pass\n",
        "Base = tf.keras.Model\nclass Net(Base):\n    pass\n",  # as the analysis reads it
        "from .layers import Layer\nclass Mine(Layer):\n    pass\n",
        "def serve(x):\n    return tf.reduce_sum(x)\n",
        "concrete = fn.get_concrete_function\n",
    ],
)
def test_words_in_strings_comments_or_longer_names_do_not(code: str) -> None:
    # Plain TensorFlow code: summarised from CPython's tree until the run reaches it.
    assert not _may_hold(ast.parse("import tensorflow as tf\n" + code))


def test_a_warm_run_does_not_import_libcst(tmp_path: Path) -> None:
    # Start-up is most of a warm run: everything that serves it must stay libcst-free.
    import subprocess
    import sys

    (tmp_path / "m.py").write_text(
        "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n"
    )
    run = [sys.executable, "-X", "importtime", "-m", "tflint_graph", "--exit-zero", "."]
    subprocess.run(run, cwd=tmp_path, capture_output=True, check=True)
    warm = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert "TFG101" in warm.stdout
    assert "libcst" not in warm.stderr


def test_every_keras_base_class_spelling_keeps_a_module_in_full_analysis() -> None:
    # Every spelling of a Keras base class that the analysis knows, imported either way.
    from tflint_graph.core.vocabulary import _EXACT, _PREFIXES, canonical, keras_kinds_of

    spellings = [k for k, v in _EXACT.items() if keras_kinds_of([canonical(k)])]
    for old, new in _PREFIXES:
        if new == "keras.":
            spellings += [old + "layers.Dense", old + "Model", old + "losses.MeanSquaredError"]
    spellings += ["keras.metrics.Mean", "keras.Sequential", "keras.models.Model", "keras.Layer"]
    for name in spellings:
        assert keras_kinds_of([canonical(name)]), name
        module, _, last = name.rpartition(".")
        for source in (
            f"import {module}\nclass C({name}):\n    pass\n",
            f"from {module} import {last}\nclass C({last}):\n    pass\n",
        ):
            assert _may_hold(ast.parse(source)), source


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("tf.saved_model.save(m, path)\n", "TFG301"),
        ("archive.add_endpoint('serve', fn)\n", "TFG301"),
        ("tf.config.run_functions_eagerly(True)\n", "TFG402"),
    ],
)
def test_a_rules_trigger_words_keep_a_module_only_while_the_rule_is_enabled(
    code: str, rule: str
) -> None:
    tree = ast.parse("import tensorflow as tf\n" + code)
    assert _may_hold(tree)
    without = prefilter.triggers(rule_triggers(Config(ignore=(rule,)), "pkg/mod.py"))
    assert not _may_hold(tree, without)


def test_the_words_of_traced_code_do_not_depend_on_the_selection() -> None:
    # Traced code reaches other modules (their findings need it) whatever is selected here.
    only = prefilter.triggers(rule_triggers(Config(select=("TFG101",)), "pkg/mod.py"))
    assert _may_hold(ast.parse("import tensorflow as tf\n@tf.function\ndef f(x): ...\n"), only)


def test_a_new_rules_trigger_word_reaches_the_prefilter(monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole-module rule whose word is nowhere in the vocabulary still runs: the
    prefilter's words come from the enabled rules, not from a list of its own."""
    from tflint_graph.checks import ALL_RULES, ModuleRule
    from tflint_graph.core.finding import Severity
    from tflint_graph.run import dispatch

    class FrobnicateCall(ModuleRule):
        """Test rule: reports every module it runs on."""

        code = "TFG999"
        name = "frobnicate"
        severity = Severity.INFO
        TRIGGERS = frozenset({"frobnicate"})

        def check(self) -> None:
            self.report(self.ctx.module.body[0], "checked", None)

    source = "import tensorflow as tf\n\ntf.frobnicate(1)\n"
    assert not _may_hold(ast.parse(source))
    monkeypatch.setattr(dispatch, "ALL_RULES", (*ALL_RULES, FrobnicateCall))
    findings, _ = analyse_source(source, "m.py", Config())
    assert [(f.code, f.line) for f in findings] == [("TFG999", 1)]


def test_guard_helpers_of_a_module_without_traced_code_are_known() -> None:
    # `ModuleSummary.tracing_values` from CPython's tree, as the libcst analysis gives them.
    source = dedent(
        '''
        import tensorflow as tf

        def is_eager(x):
            """True for an eager tensor."""
            return hasattr(x, "numpy")

        def is_symbolic(t):
            return hasattr(t, "graph")

        def in_graph():
            return not tf.executing_eagerly()

        def inside():
            return tf.inside_function()

        def positive(x):
            return x > 0
        '''
    )
    tree, module = ast.parse(source), cst.parse_module(source)
    view = VIEWS[1]
    twin = prefilter.tracing_values(tree, prefilter.module_imports(tree, view))
    ctx = ModuleContext("pkg/sub/mod.py", source, module, Config(), view)
    ctx.traced = find_traced(ctx)
    assert twin == traced_of(ctx).guards.exported()
    assert twin == {"is_eager": False, "is_symbolic": True, "in_graph": True, "inside": True}
