"""The library API (SPEC §3): ``lint_source``, ``lint_paths``, ``lint_file``, ``Finding``,
``Config``."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

import tflint_graph
from tests.cli_support import CLEAN, PRINT_STEP, THREE_CODES, chdir, run_process, write_tree
from tests.helpers import DEMO, REPO
from tflint_graph import (
    Config,
    ConfigError,
    Finding,
    Severity,
    lint_file,
    lint_paths,
    lint_source,
)


def test_public_names() -> None:
    for name in ("lint_source", "lint_paths", "lint_file", "Finding", "Config"):
        assert name in tflint_graph.__all__
        assert getattr(tflint_graph, name).__doc__
    assert "Severity" in tflint_graph.__all__
    assert isinstance(tflint_graph.__version__, str)


def test_finding_fields_are_typed_and_one_based() -> None:
    [finding] = lint_source(PRINT_STEP, path="train.py")
    assert isinstance(finding, Finding)
    assert finding.path == "train.py"
    assert (finding.line, finding.column) == (5, 5)  # `print` is on line 5, after 4 spaces
    assert (finding.end_line, finding.end_column) == (5, 13)
    assert finding.code == "TFG101"
    assert finding.name == "print-in-traced"
    assert isinstance(finding.severity, Severity)
    assert finding.severity.value in ("error", "warning", "info")
    assert finding.context == "decorated with @tf.function"
    assert finding.chain == ("step()",)
    assert isinstance(finding.message, str)
    assert "step()" in finding.message
    assert isinstance(finding.fix, str)
    for field in dataclasses.fields(Finding):
        assert field.name in finding.to_dict()


def test_column_one_and_line_one() -> None:
    [finding] = lint_source("print(\n", "m.py")
    assert finding.code == "TFG001"
    assert (finding.line, finding.column) == (1, 6)
    [finding] = lint_source("import tensorflow as tf\n(", "m.py")
    assert (finding.line, finding.column) == (2, 1)


def test_finding_is_frozen_hashable_and_serialisable() -> None:
    [finding] = lint_source(PRINT_STEP)
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.line = 3  # type: ignore[misc]
    assert len({finding, lint_source(PRINT_STEP)[0]}) == 1
    data = json.loads(json.dumps(finding.to_dict()))
    assert data["severity"] == finding.severity.value
    assert data["chain"] == ["step()"]
    assert finding.sort_key == ("<stdin>", 0, 5, 5, "TFG101")  # 0: no notebook cell


def test_default_path_is_stdin() -> None:
    assert lint_source(PRINT_STEP)[0].path == "<stdin>"


def test_findings_are_sorted() -> None:
    source = THREE_CODES.replace("t = time.time()", "t = time.time(); print(random.random())")
    findings = lint_source(source)
    assert findings == sorted(findings, key=lambda f: f.sort_key)
    assert [(f.line, f.column, f.code) for f in findings] == [
        (8, 5, "TFG101"),
        (9, 13, "TFG103"),
        (10, 9, "TFG104"),
        (10, 22, "TFG101"),
        (10, 28, "TFG103"),
    ]


def test_clean_source_gives_an_empty_list() -> None:
    assert lint_source(CLEAN) == []
    assert lint_source("") == []


def test_config_selection() -> None:
    def codes(config: Config) -> list[str]:
        return [f.code for f in lint_source(THREE_CODES, "pkg/m.py", config)]

    assert codes(Config()) == ["TFG101", "TFG103", "TFG104"]
    assert codes(Config(select=("TFG103",))) == ["TFG103"]
    assert codes(Config(ignore=("TFG10",))) == []
    assert codes(Config(select=("TFG1",), ignore=("TFG101",))) == ["TFG103", "TFG104"]
    assert codes(Config(select=("TFG104",), extend_select=("TFG101",))) == ["TFG101", "TFG104"]
    assert codes(Config(per_file_ignores={"pkg/*": ("TFG101",)})) == ["TFG103", "TFG104"]
    assert codes(Config(per_file_ignores={"other/*": ("TFG101",)})) == [
        "TFG101",
        "TFG103",
        "TFG104",
    ]


def test_is_enabled_prefix_rules() -> None:
    config = Config(select=("TFG1",), ignore=("TFG10",), extend_select=("TFG105",))
    assert not config.is_enabled("TFG101")
    assert config.is_enabled("TFG105")  # more specific than the ignore
    assert config.is_enabled("TFG110")
    assert not config.is_enabled("TFG201")
    assert not Config(select=("TFG101",), ignore=("TFG101",)).is_enabled("TFG101")


def test_lint_paths_accepts_str_and_pathlike_and_sorts(tmp_path: Path) -> None:
    write_tree(tmp_path, {"b.py": PRINT_STEP, "a/c.py": THREE_CODES, "a/ok.py": CLEAN})
    with chdir(tmp_path):
        findings = list(lint_paths(["b.py", Path("a")]))
    assert [(f.path, f.line, f.code) for f in findings] == [
        ("a/c.py", 8, "TFG101"),
        ("a/c.py", 9, "TFG103"),
        ("a/c.py", 10, "TFG104"),
        ("b.py", 5, "TFG101"),
    ]
    result = lint_paths([tmp_path])
    assert isinstance(result, Iterator)
    assert [Path(f.path).name for f in result] == ["c.py"] * 3 + ["b.py"]


def test_lint_paths_with_config(tmp_path: Path) -> None:
    write_tree(tmp_path, {"keep/a.py": PRINT_STEP, "skip/b.py": PRINT_STEP})
    config = Config(exclude=("skip",), select=("TFG101",), root=tmp_path)
    assert [Path(f.path).parent.name for f in lint_paths([tmp_path], config)] == ["keep"]


def test_config_discover_loads_the_pyproject_the_cli_uses(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.tflint-graph]\nignore = ["TFG101"]\n',
            "src/pkg/a.py": THREE_CODES,
            "src/pkg/b.py": PRINT_STEP,
        },
    )
    config = Config.discover(tmp_path / "src" / "pkg")
    assert config.ignore == ("TFG101",)
    # A file, and a path not written yet (an editor's new buffer), are governed the same way.
    assert Config.discover(tmp_path / "src/pkg/a.py") == config
    assert Config.discover(tmp_path / "src/pkg/new/c.py") == config
    found = {(Path(f.path).name, f.code) for f in lint_paths([tmp_path / "src"], config)}
    assert found == {("a.py", "TFG103"), ("a.py", "TFG104")}
    cli = run_process(["--output-format", "json", "src"], tmp_path)
    shown = {(Path(f["path"]).name, f["code"]) for f in json.loads(cli.stdout)["findings"]}
    assert shown == found
    # No pyproject.toml with the table: the defaults; a broken one raises as the CLI stops.
    assert Config.discover(tmp_path.parent) == Config()
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-graph]\nselect = ["TFG999"]\n')
    with pytest.raises(ConfigError, match="TFG999"):
        Config.discover(tmp_path)


def test_lint_paths_missing_path_raises_before_linting(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    with pytest.raises(FileNotFoundError, match="missing"):
        list(lint_paths([tmp_path / "a.py", tmp_path / "missing"]))


def test_lint_file_display_path(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    [finding] = lint_file(tmp_path / "a.py", display="shown/as.py")
    assert finding.path == "shown/as.py"


# -- garbage in, findings out ---------------------------------------------------------------

WEIRD = [
    "",
    " ",
    "\n\n\n",
    "\x00\x01\x02",
    "\ufeff\ufeffx = 1",
    "\udcff",
    "def",
    "class X(:",
    "import tensorflow as tf\n@tf.function\ndef f(x):\n    pri\u200bnt(x)\n",
    "@" * 100,
    ")" * 50,
    "'''" * 3,
    "import tensorflow as tf\n" + "if x:\n" * 120,
    "import tensorflow as tf\n" + "".join(" " * i + "if x:\n" for i in range(120)),
    "import tensorflow as tf\nx = " + "f(" * 150 + ")" * 150,
    "import tensorflow as tf\n@tf.function\n" + "def f(x):\n" * 2,
    "from __future__ import braces\n",
    "import tensorflow as tf\nglobal x\nnonlocal y\n",
    "import tensorflow as tf\n@tf.function\ndef f(*, **k): pass\n",
]


@pytest.mark.parametrize("source", WEIRD, ids=range(len(WEIRD)))
def test_lint_source_never_raises_on_garbage(source: str) -> None:
    findings = lint_source(source, "weird.py")
    assert isinstance(findings, list)
    assert all(f.line >= 1 and f.column >= 1 for f in findings)


def test_lint_source_never_raises_on_random_token_soup() -> None:
    pieces = [
        "import tensorflow as tf\n",
        "@tf.function\n",
        "def f(x):\n",
        "    ",
        "\t",
        "print(",
        "x",
        ")",
        "(",
        "[",
        "]",
        "{",
        "}",
        ":",
        "\n",
        "lambda",
        " ",
        "'",
        '"',
        "\\",
        "#",
        "noqa",
        "yield",
        "global g",
        "g += 1",
        "random.random()",
        ",",
        "*",
        "**",
        "=",
        "\r\n",
        "\x0c",
        "if",
        "else",
        "for",
        "in",
        "async ",
        "await ",
        "class C(tf.keras.Model):\n",
        "self.",
        ".",
    ]
    rng = random.Random(20240611)
    for _ in range(150):
        source = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        findings = lint_source(source, "soup.py")
        assert all(isinstance(f, Finding) for f in findings), source


def test_static_analysis_never_imports_tensorflow() -> None:
    """Linting a whole TensorFlow project must not import TensorFlow (or the project)."""
    import subprocess
    import sys

    code = (
        "import sys; from tflint_graph import lint_paths; "
        f"found = list(lint_paths([{str(DEMO)!r}])); "
        "assert found, 'the demo has findings'; "
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('tensorflow', 'keras', 'numpy', 'imageclf', 'train')); "
        "assert not leaked, leaked"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


def test_lint_source_from_several_threads_at_once() -> None:
    # The engine keeps recently parsed trees for second analyses; threads share that store.
    from concurrent.futures import ThreadPoolExecutor

    sources = [
        f"import tensorflow as tf\n\n@tf.function\ndef step{i}(x):\n    print(x)\n"
        + "    y = x\n" * i
        + "    return x\n"
        for i in range(12)
    ]
    expected = [lint_source(s) for s in sources]
    with ThreadPoolExecutor(6) as pool:
        got = list(pool.map(lint_source, sources * 8))
    assert got == expected * 8
    assert all(f.code == "TFG101" for found in got for f in found)
