"""Project context everywhere (SPEC §3): a run given some files of a project reads the rest
of it as context and reports only the given files; the flake8 plugin does the same from the
project's cache.  The scenario of the issue: a pre-commit hook passes only the staged
``utils.py``, whose helper is traced because the unchanged ``train.py`` calls it from a
``@tf.function``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tflint_graph.run.module
from tests.cli_support import codes_in, invoke, write_tree
from tests.helpers import dedent
from tflint_graph import Config, lint_paths

TRAIN = dedent(
    """
    import tensorflow as tf

    import utils


    @tf.function
    def step(x):
        return utils.helper(x) * 2
    """
)

UTILS = dedent(
    """
    import tensorflow as tf


    def helper(x):
        print("tracing", x)
        return tf.square(x)
    """
)

# utils.py with a second trace-time print, and train.py no longer calling the helper.
UTILS_TWO_PRINTS = UTILS.replace(
    '    print("tracing", x)\n', '    print("tracing", x)\n    print("again", x)\n'
)
TRAIN_WITHOUT_CALL = TRAIN.replace("utils.helper(x) * 2", "x * 2")

HELPER_FINDING = ("utils.py", 5, 5, "TFG101")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path, {"train.py": TRAIN, "utils.py": UTILS})


def test_a_staged_helper_is_traced_through_an_unchanged_caller(project: Path) -> None:
    result = invoke(["utils.py"], project)
    assert codes_in(result.output) == [HELPER_FINDING]
    assert "traced via step() -> helper()" in result.output
    assert result.exit_code == 1


def test_only_the_given_files_are_reported(project: Path) -> None:
    result = invoke(["train.py"], project)
    assert codes_in(result.output) == []
    assert "All checks passed!" in result.output
    assert result.exit_code == 0


@pytest.mark.parametrize("cache", [[], ["--no-cache"]], ids=["cache", "no-cache"])
def test_the_same_findings_with_and_without_a_cache(project: Path, cache: list[str]) -> None:
    first = invoke([*cache, "utils.py"], project)
    again = invoke([*cache, "utils.py"], project)
    assert codes_in(first.output) == codes_in(again.output) == [HELPER_FINDING]
    assert (project / ".tflint-graph-cache").is_dir() is (cache == [])


def test_a_stale_cache_follows_edits_of_given_and_context_files(project: Path) -> None:
    assert codes_in(invoke(["utils.py"], project).output) == [HELPER_FINDING]
    # The given file edited (its summary is the same): both prints.
    (project / "utils.py").write_text(UTILS_TWO_PRINTS, encoding="utf-8")
    both = [HELPER_FINDING, ("utils.py", 6, 5, "TFG101")]
    assert codes_in(invoke(["utils.py"], project).output) == both
    # The unchanged-for-the-hook caller edited: the helper is no longer traced.
    (project / "train.py").write_text(TRAIN_WITHOUT_CALL, encoding="utf-8")
    result = invoke(["utils.py"], project)
    assert codes_in(result.output) == []
    assert result.exit_code == 0
    # And traced again.
    (project / "train.py").write_text(TRAIN, encoding="utf-8")
    assert codes_in(invoke(["utils.py"], project).output) == both


def test_an_edited_staged_file_alone_is_analysed_again_and_keeps_its_chain(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pre-commit case: the project is recorded, then the staged file is edited.
    write_tree(project, {"data.py": "ROWS = [1, 2, 3]\n"})
    assert codes_in(invoke(["utils.py"], project).output) == [HELPER_FINDING]
    analysed: list[str] = []
    real = tflint_graph.run.module.analyse_file

    def spy(path: Path, *args: Any, **kwargs: Any) -> Any:
        analysed.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(tflint_graph.run.module, "analyse_file", spy)
    (project / "utils.py").write_text(UTILS_TWO_PRINTS + "# staged\n", encoding="utf-8")
    edited = invoke(["utils.py"], project)
    both = [HELPER_FINDING, ("utils.py", 6, 5, "TFG101")]
    assert codes_in(edited.output) == both
    assert edited.output.count("traced via step() -> helper()") == 2
    # The unchanged modules came from the cache; the edited one was analysed again.
    assert set(analysed) == {"utils.py"}
    # As a full run without a cache says.
    assert edited.output == invoke(["--no-cache", "utils.py"], project).output
    # The hook run again (a retried commit): answered from the record written after the edit.
    analysed.clear()
    assert invoke(["utils.py"], project).output == edited.output
    assert analysed == []


def test_an_edit_that_changes_what_a_module_calls_is_followed(project: Path) -> None:
    write_tree(project, {"ops.py": "def clip(x):\n    print(x)\n    return x\n"})
    assert codes_in(invoke(["utils.py", "ops.py"], project).output) == [HELPER_FINDING]
    # The helper now calls into ops.py: ops.clip becomes traced (a new outgoing call).
    edited = UTILS.replace("import tensorflow as tf\n", "import tensorflow as tf\n\nimport ops\n")
    edited = edited.replace("return tf.square(x)", "return ops.clip(tf.square(x))")
    (project / "utils.py").write_text(edited, encoding="utf-8")
    cached = invoke(["utils.py", "ops.py"], project)
    uncached = invoke(["--no-cache", "utils.py", "ops.py"], project)
    assert codes_in(cached.output) == codes_in(uncached.output)
    assert ("ops.py", 2, 5, "TFG101") in codes_in(cached.output)
    assert "traced via step() -> helper() -> clip()" in cached.output


def test_no_context_reads_only_the_given_files(project: Path) -> None:
    result = invoke(["--no-context", "utils.py"], project)
    assert codes_in(result.output) == []
    assert result.exit_code == 0


def test_the_configured_project_is_the_context(tmp_path: Path) -> None:
    # A src layout: the caller is a script outside the package, found because the project's
    # pyproject.toml (with a [tool.tflint-graph] table) is the project root.
    write_tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.tflint-graph]\n",
            "scripts/train.py": TRAIN.replace("import utils", "from pkg import utils"),
            "src/pkg/__init__.py": "",
            "src/pkg/utils.py": UTILS,
        },
    )
    result = invoke(["src/pkg/utils.py"], tmp_path)
    assert codes_in(result.output) == [("src/pkg/utils.py", 5, 5, "TFG101")]


def test_without_configuration_the_package_tree_is_the_context(tmp_path: Path) -> None:
    # No pyproject.toml: the project is the top of the package tree (`src/`, the folder that
    # imports `pkg` resolve from), so the script in `scripts/` is not read.
    write_tree(
        tmp_path,
        {
            "scripts/train.py": TRAIN.replace("import utils", "from pkg import utils"),
            "src/pkg/__init__.py": "",
            "src/pkg/utils.py": UTILS,
            "src/pkg/loop.py": TRAIN.replace("import utils", "from pkg import utils"),
        },
    )
    result = invoke(["src/pkg/utils.py"], tmp_path)
    assert codes_in(result.output) == [("src/pkg/utils.py", 5, 5, "TFG101")]
    assert "traced via step() -> helper()" in result.output
    (tmp_path / "src/pkg/loop.py").unlink()
    assert codes_in(invoke(["src/pkg/utils.py"], tmp_path).output) == []


def test_excluded_files_are_no_context(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.tflint-graph]\nexclude = ["train.py"]\n',
            "train.py": TRAIN,
            "utils.py": UTILS,
        },
    )
    assert codes_in(invoke(["utils.py"], tmp_path).output) == []


def test_lint_paths_reads_the_project_with_context_true(project: Path) -> None:
    found = list(lint_paths([project / "utils.py"], Config(), context=True))
    assert [(Path(f.path).name, f.line, f.code) for f in found] == [("utils.py", 5, "TFG101")]
    assert found[0].chain == ("step()", "helper()")
    # Without it (the default), a library call reads only what it is given.
    assert list(lint_paths([project / "utils.py"], Config())) == []


# -- the flake8 plugin ----------------------------------------------------------------------


def _flake8(path: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "TFG", path],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_flake8_sees_the_project_through_its_cache(project: Path) -> None:
    # No cache: the file alone, the helper is not traced.
    alone = _flake8("utils.py", project)
    assert (alone.returncode, alone.stdout) == (0, "")
    invoke(["train.py"], project)  # any run in the project records it
    seen = _flake8("utils.py", project)
    assert seen.returncode == 1
    assert seen.stdout.startswith("utils.py:5:5: TFG101 ")
    assert "traced via step() -> helper()" in seen.stdout
    assert _flake8("train.py", project).stdout == ""
    # The plugin never writes the cache: a record from before the edit still gives the view.
    entries = sorted(p.name for p in (project / ".tflint-graph-cache").rglob("*.json"))
    (project / "utils.py").write_text(UTILS_TWO_PRINTS, encoding="utf-8")
    edited = _flake8("utils.py", project).stdout.splitlines()
    assert [line.split(": ")[0] for line in edited] == ["utils.py:5:5", "utils.py:6:5"]
    assert sorted(p.name for p in (project / ".tflint-graph-cache").rglob("*.json")) == entries


# flake8 on utils.py in-process; stderr's last line says whether libcst was imported.
_FLAKE8_IMPORTS = (
    "import sys\n"
    "from flake8.main.cli import main\n"
    "try:\n"
    "    main(['--isolated', '--select', 'TFG', 'utils.py'])\n"
    "except SystemExit:\n"
    "    pass\n"
    "print('libcst' in sys.modules, file=sys.stderr)\n"
)


def _flake8_imports(cwd: Path, **env: str) -> tuple[str, bool]:
    proc = subprocess.run(
        [sys.executable, "-c", _FLAKE8_IMPORTS],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout, proc.stderr.strip().splitlines()[-1] == "True"


def test_flake8_on_a_file_unchanged_since_the_run_reads_its_findings(project: Path) -> None:
    # The run stored the very analysis the plugin would make (same bytes, configuration,
    # view, path and working directory): the same findings, without libcst or the rules.
    invoke(["."], project)
    cached, imported = _flake8_imports(project)
    assert cached.startswith("utils.py:5:5: TFG101 ") and not imported
    # Another TFLINT_GRAPH_* switch is another key: analysed, with the same findings.
    analysed, imported = _flake8_imports(project, TFLINT_GRAPH_OTHER_KEY="1")
    assert analysed == cached and imported
    # Stored findings had noqa comments applied, the plugin leaves them to flake8: analysed.
    (project / "utils.py").write_text(UTILS + "# " + "noqa: E501\n", encoding="utf-8")
    invoke(["."], project)
    noqa, imported = _flake8_imports(project)
    assert noqa == cached and imported


def test_a_one_file_run_answered_from_the_cache_does_not_import_libcst(project: Path) -> None:
    # What a pre-commit hook runs on an unchanged file: the CLI, the cache and the record.
    invoke(["."], project)
    run = [sys.executable, "-X", "importtime", "-m", "tflint_graph", "utils.py"]
    warm = subprocess.run(run, cwd=project, capture_output=True, text=True, timeout=120)
    assert "utils.py:5:5: TFG101" in warm.stdout
    assert "libcst" not in warm.stderr


def test_flake8_with_a_configured_project_from_another_folder(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": "[tool.tflint-graph]\n", "train.py": TRAIN})
    write_tree(tmp_path, {"utils.py": UTILS})
    invoke(["."], tmp_path)
    # The cache is next to the pyproject.toml: found from any working directory.
    seen = _flake8(str(tmp_path / "utils.py"), tmp_path.parent)
    assert seen.stdout.startswith(f"{tmp_path / 'utils.py'}:5:5: TFG101 ")


def test_a_notebook_of_the_project_is_context_too(tmp_path: Path) -> None:
    import json

    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": s}
        for s in (["import tensorflow as tf\n", "import utils\n"], TRAIN.splitlines(True)[2:])
    ]
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    project = write_tree(tmp_path, {"explore.ipynb": json.dumps(notebook), "utils.py": UTILS})
    result = invoke(["utils.py"], project)
    assert codes_in(result.output) == [HELPER_FINDING]


LOSS = dedent(
    """
    import tensorflow as tf


    class DetectionLoss(tf.keras.losses.Loss):
        def call(self, y_true, y_pred):
            self._box_loss = tf.reduce_mean(tf.abs(y_true - y_pred))
            return self._box_loss

        def report_losses(self):
            return {"box_loss": self._box_loss}
    """
)

TASK = dedent(
    """
    import losses


    class Task:
        def __init__(self):
            self.loss_fn = losses.DetectionLoss()

        def train_step(self, model, x, y):
            loss = self.loss_fn(y, model(x))
            return loss, self.loss_fn.report_losses()
    """
)

EAGER_REPORT = TASK + dedent(
    """

    def log_losses(task):
        print(task.loss_fn.report_losses())
    """
)


def test_an_eager_caller_added_elsewhere_reaches_the_cached_module(tmp_path: Path) -> None:
    # The accessor is read only by a step function: same-call state, no finding.  A later
    # edit adds an eager reader in the other module: the run from the cache must see it.
    root = write_tree(tmp_path, {"losses.py": LOSS, "task.py": TASK})
    assert "TFG106" not in {c for *_, c in codes_in(invoke(["."], root).output)}
    (root / "task.py").write_text(EAGER_REPORT, encoding="utf-8")
    warm = {c for *_, c in codes_in(invoke(["."], root).output)}
    cold = {c for *_, c in codes_in(invoke(["--no-cache", "."], root).output)}
    assert "TFG106" in warm and warm == cold
    # Staged alone, the unchanged losses.py is still judged with the project around it.
    assert "TFG106" in {c for *_, c in codes_in(invoke(["losses.py"], root).output)}


def test_a_hook_retried_on_unchanged_files_never_loads_the_analysis(project: Path) -> None:
    # `tflint-graph utils.py` answered from the project's cache: the findings as analysed,
    # without importing libcst or the rules (their import costs more than such a run).
    invoke(["."], project)
    code = (
        "import sys\n"
        "from tflint_graph.cli import main\n"
        "try:\n"
        "    main(['--exit-zero', 'utils.py'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('libcst', 'tflint_graph.checks', 'tflint_graph.run.module', 'packaging')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.startswith("utils.py:5:5: TFG101 "), proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr
    # An edited file is analysed: then libcst is imported.
    (project / "utils.py").write_text(UTILS + "# edited\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.startswith("utils.py:5:5: TFG101 "), proc.stdout + proc.stderr
    assert "'libcst'" in proc.stderr.strip().splitlines()[-1], proc.stderr
