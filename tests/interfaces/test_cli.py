"""The command line (SPEC §3): paths, exit codes, rule selection, output formats, file
discovery.  Most tests run in-process through click's CliRunner; a few run the real program."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import tflint_graph.run.module
from tests.cli_support import (
    CLEAN,
    PRINT_STEP,
    THREE_CODES,
    VENV_SCRIPT,
    codes_in,
    finding_lines,
    invoke,
    run_process,
    write_tree,
)
from tflint_graph import __version__
from tflint_graph.checks import rule_table

# -- paths and exit codes ---------------------------------------------------------------


def test_file_with_findings_exits_1_in_path_line_col_format(tmp_path: Path) -> None:
    write_tree(tmp_path, {"step.py": PRINT_STEP})
    result = invoke(["step.py"], tmp_path)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    # ruff's layout, with the severity: `[*]` as --fix would fix it.
    assert lines[0].startswith(
        "step.py:5:5: TFG101 [*] warning: print() runs only while tracing step()"
    )
    assert "tf.print()" in lines[0]
    assert lines[1:] == ["Found 1 finding.", "[*] 1 fixable with --fix."]
    assert result.stderr == ""


def test_clean_file_exits_0(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ok.py": CLEAN})
    result = invoke(["ok.py"], tmp_path)
    assert result.exit_code == 0
    assert result.stdout.strip() == "All checks passed!"


def test_folder_is_walked_recursively(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"pkg/a.py": PRINT_STEP, "pkg/sub/deeper/b.py": PRINT_STEP, "pkg/c.txt": PRINT_STEP},
    )
    result = invoke(["pkg"], tmp_path)
    assert result.exit_code == 1
    assert [f[0] for f in codes_in(result.stdout)] == ["pkg/a.py", "pkg/sub/deeper/b.py"]


def test_default_path_is_the_current_directory(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP, "sub/b.py": PRINT_STEP})
    result = invoke([], tmp_path)
    assert result.exit_code == 1
    assert [f[0] for f in codes_in(result.stdout)] == ["a.py", "sub/b.py"]


def test_explicit_check_subcommand_is_the_same(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    assert invoke(["check", "a.py"], tmp_path).stdout == invoke(["a.py"], tmp_path).stdout


def test_a_path_named_like_a_subcommand_can_be_spelled_with_dot_slash(tmp_path: Path) -> None:
    write_tree(tmp_path, {"rules/a.py": PRINT_STEP})
    result = invoke(["./rules"], tmp_path)
    assert result.exit_code == 1
    assert codes_in(result.stdout)[0][:2] == ("rules/a.py", 5)


def test_missing_path_is_a_usage_error_with_one_clear_line(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    result = invoke(["a.py", "does_not_exist.py"], tmp_path)
    assert result.exit_code == 2
    assert result.stdout == ""
    err = result.stderr.strip().splitlines()
    assert len(err) == 1
    assert "does_not_exist.py" in err[0]
    assert "does not exist" in err[0]


@pytest.mark.parametrize(
    "args",
    [
        ["--no-such-option", "a.py"],
        ["--output-format", "xml", "a.py"],
        ["--select"],
        ["--select", "XYZ1", "a.py"],
        ["--ignore", "E501", "a.py"],
        ["--extend-select", "TFG1x", "a.py"],
    ],
    ids=["unknown-option", "bad-format", "missing-value", "bad-select", "bad-ignore", "bad-extend"],
)
def test_bad_options_exit_2(tmp_path: Path, args: list[str]) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    result = invoke(args, tmp_path)
    assert result.exit_code == 2
    assert "TFG101" not in result.stdout


def test_bad_code_message_names_the_option(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    result = invoke(["--ignore", "E501", "a.py"], tmp_path)
    assert "--ignore" in result.stderr
    assert "E501" in result.stderr


def test_internal_error_in_one_file_exits_2_and_keeps_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP, "boom.py": PRINT_STEP})
    real = tflint_graph.run.module.analyse_source

    def flaky(source: str, path: str, config, view=None):  # type: ignore[no-untyped-def]
        if path.endswith("boom.py"):
            raise RuntimeError("simulated analyzer bug")
        return real(source, path, config, view)

    monkeypatch.setattr(tflint_graph.run.module, "analyse_source", flaky)
    result = invoke(["."], tmp_path)
    assert result.exit_code == 2
    assert codes_in(result.stdout) == [("a.py", 5, 5, "TFG101")]
    assert "boom.py" in result.stderr
    assert "simulated analyzer bug" in result.stderr


def test_unexpected_exception_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tflint_graph.cli

    def broken(paths, config, **options):  # type: ignore[no-untyped-def]
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(tflint_graph.cli, "lint_paths", broken)
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    result = invoke(["a.py"], tmp_path)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "tflint-graph: error: internal error: RuntimeError: simulated crash (please report this)"
    ]


# -- rule selection ---------------------------------------------------------------------

ALL3 = {"TFG101", "TFG103", "TFG104"}


@pytest.mark.parametrize(
    ("args", "codes"),
    [
        ([], ALL3),
        (["--select", "TFG101"], {"TFG101"}),
        (["--select", "TFG1"], ALL3),
        (["--select", "TFG"], ALL3),
        (["--select", "ALL"], ALL3),
        (["--select", "TFG101,TFG103"], {"TFG101", "TFG103"}),
        (["--select", "TFG101, TFG104"], {"TFG101", "TFG104"}),
        (["--select", "TFG101", "--select", "TFG104"], {"TFG101", "TFG104"}),
        (["--select", "tfg101"], {"TFG101"}),
        (["--select", "TFG2"], set()),
        (["--ignore", "TFG103"], {"TFG101", "TFG104"}),
        (["--ignore", "TFG103,TFG104"], {"TFG101"}),
        (["--ignore", "TFG10"], set()),
        (["--select", "TFG104", "--extend-select", "TFG101"], {"TFG101", "TFG104"}),
        (["--ignore", "TFG1", "--extend-select", "TFG103"], {"TFG103"}),
        (["--select", "TFG1", "--ignore", "TFG101"], {"TFG103", "TFG104"}),
        (["--select", "TFG101", "--ignore", "TFG1"], {"TFG101"}),
        (["--select", "TFG101", "--ignore", "TFG101"], set()),
        (["--select", "ALL", "--ignore", "ALL"], set()),
    ],
)
def test_select_ignore_extend_select(tmp_path: Path, args: list[str], codes: set[str]) -> None:
    write_tree(tmp_path, {"m.py": THREE_CODES})
    result = invoke([*args, "m.py"], tmp_path)
    assert {c for *_, c in codes_in(result.stdout)} == codes
    assert result.exit_code == (1 if codes else 0)


# -- output formats ---------------------------------------------------------------------


def test_json_output_is_valid_versioned_and_complete(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": THREE_CODES})
    result = invoke(["--output-format", "json", "m.py"], tmp_path)
    assert result.exit_code == 1
    doc = json.loads(result.stdout)  # nothing but JSON on stdout
    assert doc["schema_version"] == 1
    assert doc["tool"] == {"name": "tflint-graph", "version": __version__}
    assert doc["statistics"] == {"TFG101": 1, "TFG103": 1, "TFG104": 1}
    first = doc["findings"][0]
    assert first["path"] == "m.py"
    assert (first["line"], first["column"], first["code"]) == (8, 5, "TFG101")
    assert first["name"] == "print-in-traced"
    assert first["severity"] in ("error", "warning", "info")
    assert first["context"] == "decorated with @tf.function"
    assert first["chain"] == ["step()"]
    assert isinstance(first["message"], str)
    assert isinstance(first["fix"], str)
    assert first["end_line"] == 8
    assert first["end_column"] > first["column"]
    assert [(f["line"], f["code"]) for f in doc["findings"]] == [
        (8, "TFG101"),
        (9, "TFG103"),
        (10, "TFG104"),
    ]


def test_json_output_without_findings(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ok.py": CLEAN})
    result = invoke(["--output-format", "json", "ok.py"], tmp_path)
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["findings"] == []
    assert doc["statistics"] == {}


def test_statistics_counts_per_code(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": THREE_CODES, "b.py": PRINT_STEP})
    result = invoke(["--statistics", "."], tmp_path)
    assert result.exit_code == 1
    rows = [ln.split() for ln in result.stdout.splitlines()]
    assert rows == [
        ["2", "TFG101", "print-in-traced"],
        ["1", "TFG103", "python-random"],
        ["1", "TFG104", "frozen-clock-or-env"],
    ]


def test_exit_zero_still_prints_findings(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    result = invoke(["--exit-zero", "a.py"], tmp_path)
    assert result.exit_code == 0
    assert codes_in(result.stdout) == [("a.py", 5, 5, "TFG101")]


def test_exit_zero_does_not_hide_usage_errors(tmp_path: Path) -> None:
    assert invoke(["--exit-zero", "missing.py"], tmp_path).exit_code == 2


def test_quiet_prints_findings_without_summary(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP, "ok.py": CLEAN})
    result = invoke(["--quiet", "a.py"], tmp_path)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == finding_lines(result.stdout)
    assert len(result.stdout.splitlines()) == 1
    clean = invoke(["-q", "ok.py"], tmp_path)
    assert clean.exit_code == 0
    assert clean.stdout == ""


def test_show_source_prints_the_line_and_a_caret_under_the_column(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": THREE_CODES})
    result = invoke(["--show-source", "--select", "TFG103", "m.py"], tmp_path)
    out = result.stdout.splitlines()
    assert out[0].startswith("m.py:9:13: TFG103")
    source, caret = out[1], out[2]
    assert source.strip() == "noise = random.random()"
    assert caret.strip() == "^"
    assert source[caret.index("^") :].startswith("random.random()")


# -- file discovery ---------------------------------------------------------------------


def test_exclude_and_extend_exclude_globs(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "src/a.py": PRINT_STEP,
            "src/gen_b.py": PRINT_STEP,
            "legacy/c.py": PRINT_STEP,
            "src/legacy/d.py": PRINT_STEP,
        },
    )
    every = ["legacy/c.py", "src/a.py", "src/gen_b.py", "src/legacy/d.py"]
    assert [f[0] for f in codes_in(invoke(["."], tmp_path).stdout)] == every
    out = invoke(["--exclude", "gen_*.py", "."], tmp_path).stdout
    assert [f[0] for f in codes_in(out)] == ["legacy/c.py", "src/a.py", "src/legacy/d.py"]
    out = invoke(["--extend-exclude", "legacy", "."], tmp_path).stdout
    assert [f[0] for f in codes_in(out)] == ["src/a.py", "src/gen_b.py"]
    out = invoke(["--exclude", "src/*", "--extend-exclude", "legacy/", "."], tmp_path).stdout
    assert codes_in(out) == []
    # A pattern with a slash is anchored at the working directory (or the config's folder).
    out = invoke(["--exclude", "legacy/*", "."], tmp_path).stdout
    assert [f[0] for f in codes_in(out)] == ["src/a.py", "src/gen_b.py", "src/legacy/d.py"]


def test_exclude_also_applies_to_explicit_paths_and_absolute_walks(tmp_path: Path) -> None:
    write_tree(tmp_path, {"proj/src/a.py": PRINT_STEP, "proj/gen/b.py": PRINT_STEP})
    # flake8 semantics: a user exclude skips a file even when it is named explicitly.
    result = invoke(["--exclude", "b.py", "gen/b.py", "src/a.py"], tmp_path / "proj")
    assert [f[0] for f in codes_in(result.stdout)] == ["src/a.py"]
    # A bare name matches folders below the working directory, not the folders above it.
    result = invoke(["--exclude", "proj", str(tmp_path / "proj")], tmp_path / "proj")
    assert len(codes_in(result.stdout)) == 2
    result = invoke(["--exclude", "gen", str(tmp_path / "proj")], tmp_path / "proj")
    assert [Path(f[0]).name for f in codes_in(result.stdout)] == ["a.py"]


@pytest.mark.parametrize(
    "folder",
    [".venv", "venv", "build", "dist", "node_modules", ".git", "__pycache__", "x.egg-info"],
)
def test_default_excluded_folders_are_skipped_but_explicit_files_are_linted(
    tmp_path: Path, folder: str
) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP, f"{folder}/lib/b.py": PRINT_STEP})
    assert [f[0] for f in codes_in(invoke(["."], tmp_path).stdout)] == ["a.py"]
    explicit = invoke([f"{folder}/lib/b.py"], tmp_path)
    assert [f[0] for f in codes_in(explicit.stdout)] == [f"{folder}/lib/b.py"]
    walked = invoke([folder], tmp_path)  # a default-excluded folder named explicitly
    assert [f[0] for f in codes_in(walked.stdout)] == [f"{folder}/lib/b.py"]


def test_gitignore_is_honoured(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".gitignore": "# generated code\ngenerated/\nsecret_*.py\n!secret_keep.py\n"
            "/top_only.py\n**/cache/\ndocs/*.py\n",
            "generated/a.py": PRINT_STEP,
            "secret_x.py": PRINT_STEP,
            "secret_keep.py": PRINT_STEP,
            "top_only.py": PRINT_STEP,
            "pkg/top_only.py": PRINT_STEP,
            "pkg/deep/cache/c.py": PRINT_STEP,
            "docs/d.py": PRINT_STEP,
            "docs/sub/e.py": PRINT_STEP,
            "pkg/.gitignore": "local_*.py\n",
            "pkg/local_x.py": PRINT_STEP,
            "local_y.py": PRINT_STEP,
            "main.py": PRINT_STEP,
        },
    )
    (tmp_path / ".git").mkdir()
    linted = [f[0] for f in codes_in(invoke(["."], tmp_path).stdout)]
    assert linted == [
        "docs/sub/e.py",  # `docs/*.py`: `*` does not cross `/`
        "local_y.py",  # pkg/.gitignore applies below pkg/ only
        "main.py",
        "pkg/top_only.py",  # `/top_only.py` is anchored
        "secret_keep.py",  # re-included by `!`
    ]
    # Walking a subfolder still honours the .gitignore files above it.
    sub = [f[0] for f in codes_in(invoke(["pkg"], tmp_path).stdout)]
    assert sub == ["pkg/top_only.py"]
    # A gitignored file named explicitly is linted.
    explicit = invoke(["secret_x.py", "generated/a.py"], tmp_path)
    assert [f[0] for f in codes_in(explicit.stdout)] == ["generated/a.py", "secret_x.py"]


def test_same_file_named_twice_is_linted_once(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    result = invoke(["a.py", "./a.py", "."], tmp_path)
    assert codes_in(result.stdout) == [("a.py", 5, 5, "TFG101")]


def test_output_is_sorted_by_path_line_column_code(tmp_path: Path) -> None:
    two_on_one_line = THREE_CODES.replace("print(x)", "print(random.random())")
    write_tree(
        tmp_path,
        {"b.py": THREE_CODES, "a/z.py": PRINT_STEP, "a.py": two_on_one_line, "c.py": CLEAN},
    )
    found = codes_in(invoke(["c.py", "b.py", "a", "a.py"], tmp_path).stdout)
    assert found == sorted(found)
    assert found[:3] == [
        ("a.py", 8, 5, "TFG101"),
        ("a.py", 8, 11, "TFG103"),
        ("a.py", 9, 13, "TFG103"),
    ]
    assert [f[0] for f in found] == ["a.py"] * 4 + ["a/z.py"] + ["b.py"] * 3


# -- other commands ---------------------------------------------------------------------


def test_rules_lists_every_code_with_name_and_severity(tmp_path: Path) -> None:
    result = invoke(["rules"], tmp_path)
    assert result.exit_code == 0
    rows = result.stdout.splitlines()
    codes = [row.split()[0] for row in rows]
    assert codes == sorted(codes)
    for code in ["TFG001", "TFG002", *(f"TFG10{i}" for i in range(1, 10))]:
        assert code in codes
    for row, (code, name, severity, _) in zip(rows, rule_table(), strict=True):
        assert row.split()[:3] == [code, name, severity.value]
    doc = json.loads(invoke(["rules", "--output-format", "json"], tmp_path).stdout)
    assert [r["code"] for r in doc] == codes
    assert set(doc[0]) == {"code", "name", "severity", "summary"}


@pytest.mark.parametrize("code", ["TFG101", "tfg001"])
def test_rule_prints_the_reference_page(tmp_path: Path, code: str) -> None:
    result = invoke(["rule", code], tmp_path)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"# {code.upper()}: ")


def test_rule_with_unknown_code_exits_2(tmp_path: Path) -> None:
    result = invoke(["rule", "TFG999"], tmp_path)
    assert result.exit_code == 2
    assert "TFG999" in result.stderr


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(tmp_path: Path, flag: str) -> None:
    result = invoke([flag], tmp_path)
    assert result.exit_code == 0
    assert result.stdout == f"tflint-graph, version {__version__}\n"


def test_top_level_help_shows_the_lint_options_first_and_whole_sentences(tmp_path: Path) -> None:
    result = invoke(["--help"], tmp_path)
    assert result.exit_code == 0
    out = result.stdout
    assert out.splitlines()[0].endswith(" [OPTIONS] [PATHS]...")
    commands = out.index("\nCommands:\n")
    for option in ("--select", "--fix", "--unsafe-fixes", "--fail-level", "--output-format"):
        assert out.index(f"  {option} ") < commands, option
    # Every command's summary is complete (click cut "e.g." as if it ended a sentence).
    listed = out[commands + 1 :].split("\n\n")[0].splitlines()[1:]
    assert [ln.split()[0] for ln in listed] == ["check", "rule", "rules"]
    assert all(ln.endswith(".") for ln in listed), listed
    assert "Print the reference page of rule CODE, for example TFG101." in out
    # No word is broken at a hyphen across lines.
    assert not re.search(r"[a-z]-\n", out), out


@pytest.mark.parametrize("device", ["cpu", "GPU", "gpu:1", "/device:CPU:0", "/device:GPU:2"])
def test_device_names_dynamic_mode_understands_are_accepted(tmp_path: Path, device: str) -> None:
    write_tree(tmp_path, {"ok.py": CLEAN})
    assert invoke(["--device", device, "ok.py"], tmp_path).exit_code == 0


@pytest.mark.parametrize("device", ["tpu", "gpu0", "cuda:0", "/device:TPU:0", "gpu:x", ""])
def test_an_unknown_device_is_a_usage_error(tmp_path: Path, device: str) -> None:
    write_tree(tmp_path, {"ok.py": CLEAN})
    result = invoke(["--device", device, "ok.py"], tmp_path)
    assert result.exit_code == 2
    assert f"'{device}' is not a device dynamic mode can trace on" in result.stderr
    assert "cpu, gpu, gpu:N" in result.stderr


# -- the real program -------------------------------------------------------------------


def test_python_dash_m_on_a_folder(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/a.py": PRINT_STEP, "pkg/ok.py": CLEAN})
    proc = run_process(["pkg"], tmp_path)
    assert proc.returncode == 1
    assert codes_in(proc.stdout) == [("pkg/a.py", 5, 5, "TFG101")]
    assert proc.stdout.splitlines()[-2:] == ["Found 1 finding.", "[*] 1 fixable with --fix."]


@pytest.mark.skipif(not VENV_SCRIPT.exists(), reason="console script not installed next to python")
def test_console_script_exit_codes(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP, "ok.py": CLEAN})
    ok = run_process(["ok.py", "--output-format", "json"], tmp_path, script=True)
    assert ok.returncode == 0
    assert json.loads(ok.stdout)["findings"] == []
    missing = run_process(["a.py", "nope/"], tmp_path, script=True)
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert len(missing.stderr.strip().splitlines()) == 1
    assert "nope" in missing.stderr
    version = run_process(["--version"], tmp_path, script=True)
    assert version.returncode == 0
    assert __version__ in version.stdout


def test_real_program_bad_option_is_exit_2_without_traceback(tmp_path: Path) -> None:
    proc = run_process(["--output-format", "nope", "."], tmp_path)
    assert proc.returncode == 2
    assert "nope" in proc.stderr


def test_relative_paths_are_printed_as_given(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/a.py": PRINT_STEP})
    result = invoke([str(tmp_path / "pkg")], tmp_path)
    assert codes_in(result.stdout)[0][0] == os.path.join(str(tmp_path), "pkg", "a.py")
