"""``tflint-graph -`` and ``--stdin-filename``: standard input linted as a module at that
path (what editors and formatters' integrations pipe), with ``--fix``/``--diff`` on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from tests.cli_support import PRINT_STEP, THREE_CODES, chdir, codes_in, write_tree
from tflint_graph.cli import main

PYPROJECT = """
[tool.tflint-graph]
ignore = ["TFG104"]
per-file-ignores = { "src/pkg/quiet_*.py" = ["TFG101"] }
"""


def stdin(args: list[str], source: str, cwd: Path) -> Result:
    with chdir(cwd):
        result = CliRunner().invoke(main, args, input=source)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_dash_lints_standard_input(tmp_path: Path) -> None:
    result = stdin(["-"], THREE_CODES, tmp_path)
    assert result.exit_code == 1
    assert codes_in(result.stdout) == [
        ("-", 8, 5, "TFG101"),
        ("-", 9, 13, "TFG103"),
        ("-", 10, 9, "TFG104"),
    ]
    assert stdin(["-"], "x = 1\n", tmp_path).stdout.strip() == "All checks passed!"


def test_stdin_filename_decides_configuration_and_per_file_ignores(tmp_path: Path) -> None:
    write_tree(tmp_path, {"proj/pyproject.toml": PYPROJECT, "elsewhere/.keep": ""})
    proj = tmp_path / "proj"
    # The file need not exist: the pyproject.toml above the named path applies.
    named = stdin(["-", "--stdin-filename", "src/pkg/train.py"], THREE_CODES, proj)
    assert codes_in(named.stdout) == [
        ("src/pkg/train.py", 8, 5, "TFG101"),
        ("src/pkg/train.py", 9, 13, "TFG103"),
    ]
    quiet = stdin(["--stdin-filename", "src/pkg/quiet_a.py"], THREE_CODES, proj)
    assert codes_in(quiet.stdout) == [("src/pkg/quiet_a.py", 9, 13, "TFG103")]
    # From another folder, an absolute name finds the same configuration.
    absolute = str(proj / "src/pkg/quiet_a.py")
    away = stdin(["--stdin-filename", absolute], THREE_CODES, tmp_path / "elsewhere")
    assert [c[3] for c in codes_in(away.stdout)] == ["TFG103"]
    # Without a name, the working directory's configuration.
    plain = stdin(["-"], THREE_CODES, proj)
    assert [c[3] for c in codes_in(plain.stdout)] == ["TFG101", "TFG103"]
    assert not (proj / ".tflint-graph-cache").exists()  # nothing on disk to cache


def test_dash_with_other_paths_or_a_name_with_paths_is_a_usage_error(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    mixed = stdin(["-", "a.py"], PRINT_STEP, tmp_path)
    assert mixed.exit_code == 2
    assert "cannot be combined with other paths" in mixed.stderr
    named = stdin(["--stdin-filename", "x.py", "a.py"], PRINT_STEP, tmp_path)
    assert named.exit_code == 2


def test_fix_on_stdin_prints_the_fixed_source_and_reports_on_stderr(tmp_path: Path) -> None:
    result = stdin(["-", "--fix", "--stdin-filename", "m.py"], THREE_CODES, tmp_path)
    assert result.exit_code == 1  # TFG103 and TFG104 remain
    assert result.stdout == THREE_CODES.replace("    print(x)", "    tf.print(x)")
    assert codes_in(result.stderr) == [("m.py", 9, 13, "TFG103"), ("m.py", 10, 9, "TFG104")]
    assert "Fixed 1 finding." in result.stderr
    unchanged = stdin(["-", "--fix"], "x = 1\n", tmp_path)
    assert (unchanged.exit_code, unchanged.stdout) == (0, "x = 1\n")


def test_diff_on_stdin(tmp_path: Path) -> None:
    result = stdin(["-", "--diff", "--stdin-filename", "pkg/m.py"], PRINT_STEP, tmp_path)
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a/pkg/m.py\n+++ b/pkg/m.py\n")
    assert "-    print(x)\n+    tf.print(x)\n" in result.stdout


def test_undecodable_stdin_is_tfg002(tmp_path: Path) -> None:
    with chdir(tmp_path):
        result = CliRunner().invoke(main, ["-"], input=b"x = '\xff'\n")
    assert result.exit_code == 1
    assert [c[3] for c in codes_in(result.stdout)] == ["TFG002"]


def test_the_real_program_reads_stdin(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": PYPROJECT})
    proc = subprocess.run(
        [sys.executable, "-m", "tflint_graph", "-", "--stdin-filename", "src/pkg/quiet_m.py"],
        cwd=tmp_path,
        input=THREE_CODES,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert codes_in(proc.stdout) == [("src/pkg/quiet_m.py", 9, 13, "TFG103")]


def test_a_notebook_name_reads_standard_input_as_a_notebook(tmp_path: Path) -> None:
    from tests.interfaces.test_notebooks import NOTEBOOK

    result = stdin(["-", "--stdin-filename", "explore.ipynb"], NOTEBOOK, tmp_path)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("explore.ipynb:cell 3:3:5: TFG101 [*] warning: print()")
    assert lines[1].startswith("explore.ipynb:cell 3:4:13: TFG103 error:")
    assert lines[2].startswith("explore.ipynb:cell 4:2:5: TFG303 ")
    # --fix prints the notebook with only the changed cell rewritten, the report on stderr.
    fixed = stdin(["--fix", "--stdin-filename", "explore.ipynb"], NOTEBOOK, tmp_path)
    doc, before = json.loads(fixed.stdout), json.loads(NOTEBOOK)
    assert "".join(doc["cells"][2]["source"]).count("tf.print(x)") == 1
    assert [c for k, c in enumerate(doc["cells"]) if k != 2] == [
        c for k, c in enumerate(before["cells"]) if k != 2
    ]
    assert "Fixed 1 finding." in fixed.stderr
    assert "explore.ipynb:cell 3:4:13: TFG103" in fixed.stderr
    # Text that is not a notebook is a TFG001 finding, as a file would be.
    broken = stdin(["--stdin-filename", "explore.ipynb"], "print(1)\n", tmp_path)
    assert broken.exit_code == 1 and "explore.ipynb:1:1: TFG001" in broken.stdout


def test_stdin_sees_the_project_as_its_last_run_recorded_it(tmp_path: Path) -> None:
    # The editor's buffer of utils.py: its helper is traced only because train.py, unchanged
    # on disk, calls it from a @tf.function.
    train = (
        "import tensorflow as tf\nimport utils\n\n"
        "@tf.function\ndef step(x):\n    return utils.helper(x)\n"
    )
    utils = "def helper(x):\n    return x\n"
    buffer = 'def helper(x):\n    print("value", x)\n    return x\n'
    project = write_tree(
        tmp_path, {"pyproject.toml": "[tool.tflint-graph]\n", "train.py": train, "utils.py": utils}
    )
    alone = stdin(["-", "--stdin-filename", "utils.py"], buffer, project)
    assert codes_in(alone.stdout) == []  # no record of the project yet: the buffer alone
    with chdir(project):
        assert CliRunner().invoke(main, ["."]).exit_code == 0  # a run records the project
    seen = stdin(["-", "--stdin-filename", "utils.py"], buffer, project)
    assert codes_in(seen.stdout) == [("utils.py", 2, 5, "TFG101")]
    assert "traced via step() -> helper()" in seen.stdout
