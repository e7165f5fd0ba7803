"""The flake8 plugin: real flake8 runs report what the CLI reports for the same file, and
flake8's own noqa / select / extend-ignore / per-file-ignores and stdin work."""

from __future__ import annotations

import ast
import logging
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

import tflint_graph.run.module
from tests.helpers import CASES, REPO, dedent
from tflint_graph import Config, Finding, flake8_plugin, lint_paths, lint_source
from tflint_graph.checks import ALL_RULES
from tflint_graph.flake8_plugin import Plugin

CASE_FILES = sorted(CASES.glob("*.py"))
# flake8's default format: path:row:col: CODE text (col is 1-based in the output).
OUTPUT = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<text>.*)$")

Row = tuple[int, int, str]


def _command(args: Sequence[str]) -> list[str]:
    # --isolated: no user or project flake8 configuration changes the outcome.
    return [sys.executable, "-m", "flake8", "--isolated", *args]


def _parse(proc: subprocess.CompletedProcess[str]) -> dict[str, set[Row]]:
    assert "Traceback" not in proc.stderr, proc.stderr
    by_path: dict[str, set[Row]] = {}
    for line in proc.stdout.splitlines():
        match = OUTPUT.match(line)
        assert match, f"unexpected flake8 output: {line!r}"
        by_path.setdefault(match["path"], set()).add(
            (int(match["line"]), int(match["col"]), match["code"])
        )
    return by_path


def flake8(
    args: Sequence[str], cwd: Path, stdin: str | None = None
) -> tuple[dict[str, set[Row]], subprocess.CompletedProcess[str]]:
    """Run flake8; its findings by path."""
    proc = subprocess.run(
        _command(args), cwd=cwd, input=stdin, capture_output=True, text=True, timeout=600
    )
    return _parse(proc), proc


def rows(findings: Iterable[Finding]) -> set[Row]:
    return {(f.line, f.column, f.code) for f in findings}


@pytest.fixture(scope="module")
def single_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every single-file input: the rule cases and each rule's documented VALID/INVALID
    examples (each written out alone in its own directory)."""
    examples = tmp_path_factory.mktemp("examples")
    paths = list(CASE_FILES)
    for rule in ALL_RULES:
        for kind, sources in (("valid", rule.VALID), ("invalid", rule.INVALID)):
            for i, source in enumerate(sources):
                path = examples / f"{rule.code.lower()}_{kind}_{i}" / "example.py"
                path.parent.mkdir()
                path.write_text(source, encoding="utf-8")
                paths.append(path)
    return paths


@pytest.fixture(scope="module")
def both_runs(single_files: list[Path]) -> tuple[dict[str, set[Row]], dict[str, set[Row]]]:
    """(flake8's findings, the CLI engine's findings) by path: one flake8 process over all
    files (absolute paths, so its output names them as given), and ``lint_paths`` on each
    file alone, computed while flake8 runs."""
    with subprocess.Popen(
        _command(["--select", "TFG", *map(str, single_files)]),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as popen:
        cli = {str(p): rows(lint_paths([p])) for p in single_files}
        stdout, stderr = popen.communicate(timeout=600)
    proc = subprocess.CompletedProcess(popen.args, popen.returncode, stdout, stderr)
    assert proc.returncode == 1, stderr
    return _parse(proc), cli


def test_flake8_and_the_cli_report_the_same_findings_for_every_single_file(
    single_files: list[Path], both_runs: tuple[dict[str, set[Row]], dict[str, set[Row]]]
) -> None:
    flake8_found, cli_found = both_runs
    assert len(single_files) > 100
    mismatches = {
        str(path.relative_to(path.parents[1])): (
            sorted(flake8_found.get(str(path), set()) - cli_found[str(path)]),
            sorted(cli_found[str(path)] - flake8_found.get(str(path), set())),
        )
        for path in single_files
        if flake8_found.get(str(path), set()) != cli_found[str(path)]
    }
    assert mismatches == {}
    # The comparison is not vacuous: (nearly) every rule is found somewhere.
    codes = {code for found in flake8_found.values() for _, _, code in found}
    assert len(codes) >= 25, codes


def test_a_case_file_alone_is_what_lint_source_sees(
    both_runs: tuple[dict[str, set[Row]], dict[str, set[Row]]],
) -> None:
    # Sanity check of the premise (a lone file follows no other module) on a few cases.
    _, cli_found = both_runs
    for path in CASE_FILES[:3]:
        assert (
            rows(lint_source(path.read_text(encoding="utf-8"), str(path))) == cli_found[str(path)]
        )


# -- flake8's own filtering and stdin, in a small project with a [tool.tflint-graph] table --

PRINTS = dedent(
    """
    import time
    import tensorflow as tf

    @tf.function
    def step(x):
        print(x)
        print(x)  # noqa: TFG101
        print(x)  # noqa: E501
        print(x)  # noqa
        t = time.time()
        return x + t
    """
)

TUNED = dedent(
    """
    from myproj.compile import graph_fn
    import tensorflow as tf

    @graph_fn
    def wrapped(x):
        print(x)
        return x

    @tf.function
    def step(x):
        for i in range(50):
            x = x + 1.0
        return x
    """
)

PYPROJECT = dedent(
    """
    [tool.tflint-graph]
    unroll-max = 10
    extra-function-decorators = ["myproj.compile.graph_fn"]
    ignore = ["TFG404"]
    """
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    for name, source in {"prints.py": PRINTS, "sub/other.py": PRINTS, "tuned.py": TUNED}.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(source, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def filtered_run(project: Path) -> dict[str, set[Row]]:
    by_path, _ = flake8(
        [
            "--select",
            "TFG",
            "--extend-ignore",
            "TFG104",
            "--per-file-ignores",
            "sub/*.py:TFG101",
            "prints.py",
            "sub/other.py",
            "tuned.py",
        ],
        cwd=project,
    )
    return by_path


def test_noqa_is_applied_by_flake8(filtered_run: dict[str, set[Row]]) -> None:
    # Lines 7 (noqa: TFG101) and 9 (blanket noqa) are silenced; noqa: E501 is not ours.
    assert filtered_run["prints.py"] == {(6, 5, "TFG101"), (8, 5, "TFG101")}


def test_extend_ignore_and_per_file_ignores(filtered_run: dict[str, set[Row]]) -> None:
    # TFG104 (time.time() in traced code) is found by the engine but --extend-ignore'd;
    # sub/*.py has every TFG101 ignored.
    assert {code for *_, code in rows(lint_source(PRINTS))} >= {"TFG101", "TFG104"}
    assert "sub/other.py" not in filtered_run


def test_pyproject_options_apply_in_flake8(filtered_run: dict[str, set[Row]]) -> None:
    # extra-function-decorators makes wrapped() traced; unroll-max = 10 flags the loop.
    assert {(line, code) for line, _, code in filtered_run["tuned.py"]} == {
        (6, "TFG101"),
        (11, "TFG305"),
    }
    assert lint_source(TUNED) == []  # neither without the configuration


def test_stdin(project: Path) -> None:
    by_path, proc = flake8(["--select", "TFG", "-"], cwd=project, stdin=TUNED + PRINTS)
    assert proc.returncode == 1
    offset = TUNED.count("\n")
    assert by_path == {
        "stdin": {
            (6, 5, "TFG101"),  # the pyproject.toml of the working directory applies
            (11, 5, "TFG305"),
            (offset + 6, 5, "TFG101"),
            (offset + 8, 5, "TFG101"),
            (offset + 10, 9, "TFG104"),
        }
    }


def test_stdin_with_a_display_name_uses_that_files_configuration(project: Path) -> None:
    # Editors pipe the unsaved buffer and name the file; the working directory (the
    # repository, no [tool.tflint-graph]) does not decide the configuration then.
    name = str(project / "tuned.py")
    by_path, _ = flake8(["--select", "TFG", "--stdin-display-name", name, "-"], REPO, TUNED)
    assert by_path == {name: {(6, 5, "TFG101"), (11, 5, "TFG305")}}


def test_file_level_noqa_is_honoured_through_flake8(tmp_path: Path) -> None:
    # flake8 has a file-level directive of its own only; the plugin applies ours, as the CLI does.
    (tmp_path / "all.py").write_text("# tflint-graph: noqa\n" + PRINTS, encoding="utf-8")
    (tmp_path / "some.py").write_text("# tflint-graph: noqa: TFG101\n" + PRINTS, encoding="utf-8")
    (tmp_path / "none.py").write_text("# tflint_graph: noqa\n" + PRINTS, encoding="utf-8")
    by_path, _ = flake8(["--select", "TFG", "all.py", "some.py", "none.py"], tmp_path)
    cli = {p: rows(lint_paths([tmp_path / p])) for p in ("all.py", "some.py", "none.py")}
    assert "all.py" not in by_path and cli["all.py"] == set()
    assert {code for _, _, code in by_path["some.py"]} == {"TFG104"}
    assert {code for _, _, code in by_path["none.py"]} == {"TFG101", "TFG104"}
    assert by_path["some.py"] == cli["some.py"] and by_path["none.py"] == cli["none.py"]


def test_syntax_error_is_flake8s_e999_and_other_files_are_still_linted(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import tensorflow as tf\ndef f(:\n", encoding="utf-8")
    (tmp_path / "ok.py").write_text(PRINTS, encoding="utf-8")
    by_path, proc = flake8(["--select", "TFG,E999", "broken.py", "ok.py"], cwd=tmp_path)
    assert {code for *_, code in by_path["broken.py"]} == {"E999"}
    assert (6, 5, "TFG101") in by_path["ok.py"]
    assert proc.returncode == 1


# -- the plugin class in-process ----------------------------------------------------------


def run_plugin(source: str, filename: str = "example.py") -> list[tuple[int, int, str]]:
    lines = source.splitlines(keepends=True)
    return [
        (line, col, text.split()[0])
        for line, col, text, kind in Plugin(ast.parse(source), lines, filename).run()
        if kind is Plugin
    ]


def test_plugin_yields_zero_based_columns_and_keeps_noqa_for_flake8() -> None:
    assert run_plugin(PRINTS) == [
        (6, 4, "TFG101"),
        (7, 4, "TFG101"),
        (8, 4, "TFG101"),
        (9, 4, "TFG101"),
        (10, 8, "TFG104"),
    ]


def test_source_only_libcst_rejects_is_tfg001() -> None:
    # CPython's ast.parse accepts this (flake8 runs plugins), the analysis cannot.
    assert run_plugin("import tensorflow as tf\nnonlocal x\n") == [(2, 0, "TFG001")]


def test_an_internal_error_never_escapes_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("engine bug")

    monkeypatch.setattr(tflint_graph.run.module, "analyse_source", boom)
    with caplog.at_level(logging.WARNING, logger="tflint_graph"):
        assert run_plugin(PRINTS) == []
    assert "internal error while linting example.py: RuntimeError: engine bug" in caplog.text


def test_an_internal_error_does_not_stop_a_flake8_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from flake8.api import legacy
    from flake8.main.options import JobsArgument

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("engine bug")

    monkeypatch.setattr(tflint_graph.run.module, "analyse_source", boom)
    target = tmp_path / "m.py"
    target.write_text("import os\n", encoding="utf-8")  # F401: flake8 itself still reports
    guide = legacy.get_style_guide(select=["TFG", "F"], jobs=JobsArgument("1"))
    assert guide.check_files([str(target)]).total_errors == 1


def test_a_broken_configuration_falls_back_to_defaults_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setattr(flake8_plugin, "_configs", {})
    (tmp_path / "pyproject.toml").write_text(
        "[tool.tflint-graph]\nunroll-max = -1\n", encoding="utf-8"
    )
    target = tmp_path / "m.py"
    with caplog.at_level(logging.WARNING, logger="tflint_graph"):
        assert run_plugin(PRINTS, str(target)) == run_plugin(PRINTS)
    assert "unroll-max" in caplog.text and "using the default configuration" in caplog.text


def test_configuration_is_looked_up_once_per_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(flake8_plugin, "_configs", {})
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    calls: list[object] = []
    real = flake8_plugin.find_config

    def counting(paths: Sequence[Path]) -> Path | None:
        calls.append(paths)
        return real(paths)

    monkeypatch.setattr(flake8_plugin, "find_config", counting)
    for name in ("a.py", "b.py"):
        assert (6, 4, "TFG101") in run_plugin(TUNED, str(tmp_path / name))
    assert len(calls) == 1
    assert (
        flake8_plugin._config_for(str(tmp_path / "c.py")) == flake8_plugin._configs[str(tmp_path)]
    )
    assert isinstance(flake8_plugin._config_for("stdin"), Config)


@pytest.mark.parametrize(
    ("config", "offender"),
    [
        ('[tool.tflint-graph]\nselect = ["TFG999"]\n', "`TFG999`"),
        ('[tool.tflint-graph.per-file-ignores]\n"*.py" = ["TFG5"]\n', "`TFG5`"),
        ('[tool.tflint_graph]\nselect = ["TFG1"]\n', "`[tool.tflint_graph]`"),
    ],
    ids=["unknown-select", "unknown-per-file-ignore", "near-miss-table"],
)
def test_a_configuration_mistake_is_one_clear_line_not_a_traceback(
    tmp_path: Path, config: str, offender: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
    (tmp_path / "m.py").write_text(PRINTS, encoding="utf-8")
    by_path, proc = flake8(["--select", "TFG", "m.py"], cwd=tmp_path)
    assert "Traceback" not in proc.stderr
    problems = [line for line in proc.stderr.splitlines() if line.startswith("tflint-graph:")]
    assert len(problems) == 1
    assert offender in problems[0] and "using the default configuration" in problems[0]
    # The defaults still apply: the file is linted, not skipped.
    assert proc.returncode == 1
    assert by_path["m.py"]
