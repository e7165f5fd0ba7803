"""Text output in ruff's style (severity, the ``[*]`` fixable marker, colour on a terminal,
wrapping there), ``--fail-level``, ``--output-file`` and ``--color``."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tests.cli_support import CLEAN, PRINT_STEP, THREE_CODES, codes_in, invoke, write_tree
from tests.helpers import dedent
from tflint_graph.cli import main
from tflint_graph.core.finding import Finding, Severity
from tflint_graph.output import text
from tflint_graph.output.format import RunInfo, SourceLines

# One finding of each severity: TFG305 (info) at 6:5, TFG101 (warning) at 12:5, TFG103
# (error) at 13:16.
SEVERITIES = dedent(
    """
    import random
    import tensorflow as tf

    @tf.function
    def unrolled(x):
        for i in range(1000):
            x = tf.add(x, i)
        return x

    @tf.function
    def step(x):
        print(x)
        return x + random.random()
    """
)


def test_each_finding_shows_its_severity_and_the_fixable_marker(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": SEVERITIES})
    lines = invoke(["m.py"], tmp_path).stdout.splitlines()
    assert [ln.split(" ", 3)[:3] for ln in lines[:3]] == [
        ["m.py:6:5:", "TFG305", "info:"],
        ["m.py:12:5:", "TFG101", "[*]"],  # print(x) -> tf.print(x) is a safe fix
        ["m.py:13:16:", "TFG103", "error:"],  # an unsafe fix: no marker without the flag
    ]
    assert lines[1].startswith("m.py:12:5: TFG101 [*] warning: print() runs only while tracing")
    assert lines[3:] == [
        "Found 3 findings.",
        "[*] 1 fixable with --fix (1 more with --unsafe-fixes).",
    ]
    # Still what editors and `codes_in` parse: path:line:col: CODE first.
    assert [c[3] for c in codes_in("\n".join(lines))] == ["TFG305", "TFG101", "TFG103"]


@pytest.mark.parametrize(
    ("level", "source", "status"),
    [
        ("info", SEVERITIES, 1),
        ("warning", SEVERITIES, 1),
        ("error", SEVERITIES, 1),
        ("info", PRINT_STEP, 1),
        ("warning", PRINT_STEP, 1),
        ("error", PRINT_STEP, 0),  # only a warning
        ("warning", SEVERITIES.split("@tf.function\ndef step")[0], 0),  # only an info
        ("info", CLEAN, 0),
    ],
)
def test_fail_level_is_the_lowest_severity_that_fails(
    tmp_path: Path, level: str, source: str, status: int
) -> None:
    write_tree(tmp_path, {"m.py": source})
    result = invoke(["--fail-level", level, "m.py"], tmp_path)
    assert result.exit_code == status
    # The findings are all shown whatever the level.
    assert codes_in(result.stdout) == codes_in(invoke(["m.py"], tmp_path).stdout)


def test_fail_level_defaults_to_info_and_rejects_other_words(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": SEVERITIES.split("@tf.function\ndef step")[0]})
    assert invoke(["m.py"], tmp_path).exit_code == 1  # an info finding fails by default
    result = invoke(["--fail-level", "fatal", "m.py"], tmp_path)
    assert result.exit_code == 2
    assert "'fatal' is not one of 'error', 'warning', 'info'" in result.stderr


def test_output_file_gets_the_report_and_stdout_nothing(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": THREE_CODES})
    plain = invoke(["m.py"], tmp_path)
    result = invoke(["--output-file", "reports/lint.txt", "m.py"], tmp_path)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert (tmp_path / "reports/lint.txt").read_text(encoding="utf-8") == plain.stdout
    json_run = invoke(["-o", "out.json", "--output-format", "json", "m.py"], tmp_path)
    assert json_run.stdout == ""
    assert '"schema_version": 1' in (tmp_path / "out.json").read_text(encoding="utf-8")


def _colours(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> str:
    write_tree(tmp_path, {"m.py": SEVERITIES})
    result = CliRunner(env=env).invoke(main, [*args, str(tmp_path / "m.py")])
    assert result.exit_code == 1
    return result.stdout


def test_color_always_colours_and_never_or_a_pipe_does_not(tmp_path: Path) -> None:
    always = _colours(["--color", "always"], tmp_path)
    assert "\x1b[31merror:\x1b[0m" in always  # error in red
    assert "\x1b[33mwarning:\x1b[0m" in always  # warning in yellow
    assert "\x1b[36m[*]\x1b[0m" in always
    plain = _colours(["--color", "never"], tmp_path)
    assert "\x1b[" not in plain
    assert "\x1b[" not in _colours([], tmp_path)  # auto, and not a terminal
    # The same text once the styles are taken out.
    assert click.unstyle(always) == plain


def test_color_auto_honours_no_color_and_force_color(tmp_path: Path) -> None:
    assert "\x1b[" in _colours([], tmp_path, {"FORCE_COLOR": "1"})
    assert "\x1b[" not in _colours([], tmp_path, {"FORCE_COLOR": "1", "NO_COLOR": "1"})
    # An explicit --color always wins over NO_COLOR, as in ruff.
    assert "\x1b[" in _colours(["--color", "always"], tmp_path, {"NO_COLOR": "1"})
    assert "\x1b[" not in _colours(["--color", "never"], tmp_path, {"FORCE_COLOR": "1"})


def test_colour_never_reaches_machine_formats(tmp_path: Path) -> None:
    out = _colours(["--color", "always", "--output-format", "json"], tmp_path)
    assert "\x1b[" not in out


LONG = Finding(
    path="pkg/train.py",
    line=12,
    column=9,
    code="TFG109",
    name="stale-python-global",
    message=(
        "learning_rate is read while tracing finetune_step() but is reassigned in "
        "finetune_head() (line 75); the graph keeps the value seen at trace time; pass it in "
        "as a tensor argument or keep it in a tf.Variable"
    ),
    severity=Severity.WARNING,
)


@pytest.mark.parametrize("width", [60, 80, 120])
def test_on_a_terminal_long_messages_wrap_under_their_first_line(width: int) -> None:
    out = text.render([LONG], RunInfo(SourceLines(), width=width)).splitlines()
    assert out[0].startswith("pkg/train.py:12:9: TFG109 warning: learning_rate is read")
    assert len(out) > 1
    assert all(len(line) <= width for line in out), out
    assert all(line.startswith("    ") for line in out[1:])
    # Nothing is lost or reordered: the words read as the one-line message.
    joined = " ".join(line.strip() for line in out)
    assert joined == f"pkg/train.py:12:9: TFG109 warning: {LONG.message}"
    # Off a terminal (no width) it stays one line for editors and grep.
    assert text.render([LONG], RunInfo(SourceLines())).count("\n") == 0
