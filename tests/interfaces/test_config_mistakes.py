"""Mistakes never switch the linter off silently (SPEC §3): an unknown selector, a near-miss
table name, a ``--config`` file without our table are errors (exit 2, one line naming the
offender, no findings); a run that finds no Python file says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_support import CLEAN, PRINT_STEP, THREE_CODES, codes_in, invoke, write_tree
from tflint_graph.checks import rule_table
from tflint_graph.core.codes import KNOWN_CODES, RULE_CODES, is_known_selector
from tflint_graph.core.config import ConfigError, load_file, near_miss_tables


def one_error_line(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("tflint-graph: error: ")
    return lines[0]


# -- the list of codes --------------------------------------------------------------------


def test_known_codes_are_the_rule_registry() -> None:
    assert list(KNOWN_CODES) == [code for code, *_ in rule_table()]
    assert set(RULE_CODES) < set(KNOWN_CODES)


def test_rule_pages_match_the_known_codes() -> None:
    pages = Path(__file__).resolve().parents[2] / "rules"
    assert sorted(p.stem for p in pages.glob("TFG*.md")) == list(KNOWN_CODES)


@pytest.mark.parametrize("selector", ["ALL", "TFG", "TFG1", "TFG10", "TFG101", "TFG0", "TFG404"])
def test_known_selectors(selector: str) -> None:
    assert is_known_selector(selector)


@pytest.mark.parametrize("selector", ["TFG999", "TFG5", "TFG1010", "TFGX", "E501", "", "all"])
def test_unknown_selectors(selector: str) -> None:
    assert not is_known_selector(selector)


# -- unknown selectors in pyproject.toml -------------------------------------------------


@pytest.mark.parametrize(
    ("body", "offender", "key"),
    [
        ('select = ["TFG999"]', "TFG999", "`select`"),
        ('ignore = ["TFG5"]', "TFG5", "`ignore`"),
        ('extend-select = ["TFG1", "TFG1010"]', "TFG1010", "`extend-select`"),
        (
            '[tool.tflint-graph.per-file-ignores]\n"tests/*" = ["TFG209", "TFG299"]',
            "TFG299",
            "`per-file-ignores.tests/*`",
        ),
    ],
)
def test_unknown_selector_in_config_is_exit_2_naming_it(
    tmp_path: Path, body: str, offender: str, key: str
) -> None:
    write_tree(tmp_path, {"pyproject.toml": f"[tool.tflint-graph]\n{body}\n", "m.py": PRINT_STEP})
    line = one_error_line(invoke(["m.py"], tmp_path))
    assert f"unknown rule selector `{offender}` in {key}" in line
    assert "pyproject.toml" in line


def test_a_near_miss_code_gets_a_suggestion(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": '[tool.tflint-graph]\nignore = ["TFG1010"]\n'})
    line = one_error_line(invoke(["."], tmp_path))
    assert line.endswith("pyproject.toml; did you mean `TFG101`?")


def test_valid_selectors_and_per_file_ignores_still_work(tmp_path: Path) -> None:
    config = (
        "[tool.tflint-graph]\n"
        'select = ["TFG1", "ALL"]\n'
        'ignore = ["TFG10"]\n'
        'extend-select = ["TFG103"]\n'
        '[tool.tflint-graph.per-file-ignores]\n"skip/*" = ["TFG"]\n'
        "[tool.ruff]\nline-length = 90\n"
    )
    write_tree(tmp_path, {"pyproject.toml": config, "m.py": THREE_CODES, "skip/m.py": THREE_CODES})
    result = invoke(["."], tmp_path)
    assert result.exit_code == 1
    assert result.stderr == ""
    found = codes_in(result.stdout)
    assert {path for path, *_ in found} == {"m.py"}
    assert "TFG103" in {code for *_, code in found}
    assert "TFG101" not in {code for *_, code in found}


# -- unknown selectors on the command line -----------------------------------------------


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_unknown_selector_on_the_command_line(tmp_path: Path, option: str) -> None:
    write_tree(tmp_path, {"m.py": PRINT_STEP})
    line = one_error_line(invoke([option, "TFG101,TFG999", "m.py"], tmp_path))
    assert f"unknown rule selector `TFG999` in {option}" in line


@pytest.mark.parametrize("selector", ["TFG1", "tfg1", "ALL", "TFG"])
def test_valid_prefixes_on_the_command_line(tmp_path: Path, selector: str) -> None:
    write_tree(tmp_path, {"m.py": PRINT_STEP})
    result = invoke(["--select", selector, "m.py"], tmp_path)
    assert result.exit_code == 1
    assert codes_in(result.stdout) == [("m.py", 5, 5, "TFG101")]


# -- near-miss table names ---------------------------------------------------------------


@pytest.mark.parametrize(
    "table", ["tflint_graph", "tflintgraph", "tflint-graph-x", "TFLint-Graph", "tflint-grpah"]
)
def test_near_miss_table_is_exit_2_suggesting_ours(tmp_path: Path, table: str) -> None:
    write_tree(
        tmp_path, {"pyproject.toml": f'[tool.{table}]\nselect = ["TFG101"]\n', "m.py": PRINT_STEP}
    )
    line = one_error_line(invoke(["m.py"], tmp_path))
    assert f"`[tool.{table}]`" in line
    assert "did you mean `[tool.tflint-graph]`" in line


def test_near_miss_next_to_our_table_is_an_error_too(tmp_path: Path) -> None:
    config = '[tool.tflint-graph]\nselect = ["TFG1"]\n[tool.tflint_graph]\nignore = ["TFG101"]\n'
    write_tree(tmp_path, {"pyproject.toml": config, "m.py": PRINT_STEP})
    assert "`[tool.tflint_graph]`" in one_error_line(invoke(["m.py"], tmp_path))


def test_near_miss_is_not_skipped_for_a_config_further_up(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.tflint-graph]\nselect = ["TFG1"]\n',
            "inner/pyproject.toml": '[tool.tflint_graph]\nignore = ["TFG101"]\n',
            "inner/m.py": PRINT_STEP,
        },
    )
    assert "inner" in one_error_line(invoke(["inner/m.py"], tmp_path))


def test_unrelated_tool_tables_are_not_near_misses() -> None:
    tables = {"ruff": {}, "mypy": {}, "tflint-graph": {}, "pytest": {}, "black": {}}
    assert near_miss_tables({**tables, "tflint": {}, "graph": {}}) == []
    assert near_miss_tables({**tables, "tflint.graph": {}}) == ["tflint.graph"]


# -- --config ----------------------------------------------------------------------------


def test_config_file_without_our_table_is_exit_2(tmp_path: Path) -> None:
    write_tree(tmp_path, {"other.toml": "[tool.ruff]\nline-length = 90\n", "m.py": PRINT_STEP})
    line = one_error_line(invoke(["--config", "other.toml", "m.py"], tmp_path))
    assert "other.toml" in line
    assert "[tool.tflint-graph]" in line


def test_config_file_with_our_table_and_others(tmp_path: Path) -> None:
    config = '[tool.ruff]\nline-length = 90\n[tool.tflint-graph]\nselect = ["TFG103"]\n'
    write_tree(tmp_path, {"cfg.toml": config, "m.py": THREE_CODES})
    result = invoke(["--config", "cfg.toml", "m.py"], tmp_path)
    assert result.exit_code == 1
    assert {code for *_, code in codes_in(result.stdout)} == {"TFG103"}


def test_load_file_requires_the_table_only_when_asked(tmp_path: Path) -> None:
    path = write_tree(tmp_path, {"p.toml": "[project]\nname = 'x'\n"}) / "p.toml"
    assert load_file(path).select == ("ALL",)
    with pytest.raises(ConfigError, match=r"no \[tool\.tflint-graph\] table"):
        load_file(path, require_table=True)


# -- no Python file ----------------------------------------------------------------------

NO_FILES = "tflint-graph: warning: No Python files found under the given path(s)"


@pytest.mark.parametrize(
    ("files", "args"),
    [
        ({"empty/.keep": ""}, ["empty"]),
        ({"docs/readme.txt": "hello"}, ["docs"]),
        ({"gen/a.py": CLEAN}, ["--exclude", "gen", "gen"]),
        ({"gen/a.py": CLEAN}, ["--extend-exclude", "*.py", "."]),
    ],
    ids=["empty-folder", "no-py-in-folder", "excluded-folder", "everything-excluded"],
)
def test_no_python_file_says_so_on_stderr(
    tmp_path: Path, files: dict[str, str], args: list[str]
) -> None:
    write_tree(tmp_path, files)
    result = invoke(args, tmp_path)
    assert result.exit_code == 0  # as ruff
    assert result.stderr.strip().splitlines() == [NO_FILES]
    assert "All checks passed!" not in result.stdout
    assert result.stdout.strip() == ""


def test_no_python_file_with_json_output_is_still_valid_json(tmp_path: Path) -> None:
    write_tree(tmp_path, {"empty/.keep": ""})
    result = invoke(["--output-format", "json", "empty"], tmp_path)
    assert result.exit_code == 0
    assert NO_FILES in result.stderr
    assert result.stdout.strip().startswith(("[", "{"))


def test_a_run_with_files_prints_no_such_warning(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ok.py": CLEAN})
    result = invoke(["ok.py"], tmp_path)
    assert result.stderr == ""
    assert result.stdout.strip() == "All checks passed!"
