"""``[tool.tflint-graph]`` configuration (SPEC §3): discovery, every key, errors, and how the
command line combines with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_support import PRINT_STEP, THREE_CODES, codes_in, invoke, write_tree
from tests.helpers import dedent
from tflint_graph import Config, ConfigError, lint_source
from tflint_graph.core.config import find_config, load_file, parse_table


def pyproject(body: str) -> str:
    return "[project]\nname = 'demo'\n\n[tool.tflint-graph]\n" + dedent(body)


def codes(output: str) -> set[str]:
    return {c for *_, c in codes_in(output)}


# -- discovery --------------------------------------------------------------------------


def test_config_is_found_by_walking_up_from_the_path(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "repo/pyproject.toml": pyproject('select = ["TFG103"]'),
            "repo/pkg/sub/m.py": THREE_CODES,
            "elsewhere/.keep": "",
        },
    )
    result = invoke([str(tmp_path / "repo/pkg/sub/m.py")], tmp_path / "elsewhere")
    assert codes(result.stdout) == {"TFG103"}
    result = invoke(["pkg"], tmp_path / "repo")
    assert codes(result.stdout) == {"TFG103"}


def test_nearest_pyproject_with_our_table_wins(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": pyproject('select = ["TFG103"]'),
            "inner/pyproject.toml": "[project]\nname = 'inner'\n[tool.ruff]\nline-length = 90\n",
            "inner/deeper/pyproject.toml": pyproject('select = ["TFG104"]'),
            "inner/m.py": THREE_CODES,
            "inner/deeper/m.py": THREE_CODES,
        },
    )
    # inner/ has a pyproject.toml without [tool.tflint-graph]: the search goes on upwards.
    assert codes(invoke(["inner/m.py"], tmp_path).stdout) == {"TFG103"}
    assert codes(invoke(["inner/deeper/m.py"], tmp_path).stdout) == {"TFG104"}
    assert find_config([tmp_path / "inner" / "m.py"]) == (tmp_path / "pyproject.toml").resolve()


def test_invalid_toml_that_mentions_us_is_reported_not_skipped(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": pyproject('select = ["TFG103"]'),
            "inner/pyproject.toml": "[tool.tflint-graph\nselect = [",
            "inner/m.py": THREE_CODES,
            "other/pyproject.toml": "this is [[ not toml",  # not ours: ignored
            "other/m.py": THREE_CODES,
        },
    )
    broken = invoke(["inner/m.py"], tmp_path)
    assert broken.exit_code == 2
    assert "not valid TOML" in broken.stderr
    assert len(broken.stderr.strip().splitlines()) == 1
    assert codes(invoke(["other/m.py"], tmp_path).stdout) == {"TFG103"}


def test_quoted_table_name_is_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"pyproject.toml": '[tool."tflint-graph"]\nselect = ["TFG104"]\n', "m.py": THREE_CODES},
    )
    assert codes(invoke(["m.py"], tmp_path).stdout) == {"TFG104"}


def test_config_option_uses_that_file(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": pyproject('select = ["TFG103"]'),
            "configs/strict.toml": '[tool.tflint-graph]\nselect = ["TFG101"]\n',
            "m.py": THREE_CODES,
        },
    )
    result = invoke(["--config", "configs/strict.toml", "m.py"], tmp_path)
    assert codes(result.stdout) == {"TFG101"}


@pytest.mark.parametrize("target", ["missing.toml", "configs"])
def test_config_option_with_missing_file_or_folder_exits_2(tmp_path: Path, target: str) -> None:
    write_tree(tmp_path, {"m.py": THREE_CODES, "configs/x.toml": ""})
    result = invoke(["--config", target, "m.py"], tmp_path)
    assert result.exit_code == 2
    assert target in result.stderr


# -- every key ---------------------------------------------------------------------------

VALID = {
    "select": ('["TFG1", "TFG101"]', ("TFG1", "TFG101")),
    "ignore": ('["TFG109"]', ("TFG109",)),
    "extend-select": ('["TFG2"]', ("TFG2",)),
    "per-file-ignores": ('{"tests/*" = ["TFG101"], "*_pb2.py" = ["ALL"]}', None),
    "exclude": ('["generated", "*_pb2.py"]', ("generated", "*_pb2.py")),
    "extend-exclude": ('["legacy/"]', ("legacy/",)),
    "tiny-helper-max-ops": ("3", 3),
    "unroll-max": ("250", 250),
    "serving-name-patterns": ('["serve", "export_*"]', ("serve", "export_*")),
    "extra-function-decorators": ('["myproj.compile.graph_fn"]', ("myproj.compile.graph_fn",)),
    "keras-version": ('"2"', "2"),
}


@pytest.mark.parametrize("key", sorted(VALID))
def test_every_key_accepts_a_valid_value(tmp_path: Path, key: str) -> None:
    value, expected = VALID[key]
    write_tree(tmp_path, {"pyproject.toml": pyproject(f"{key} = {value}"), "m.py": PRINT_STEP})
    config = load_file(tmp_path / "pyproject.toml")
    if expected is not None:
        assert getattr(config, key.replace("-", "_")) == expected
    assert invoke(["m.py"], tmp_path).exit_code in (0, 1)


def test_all_keys_together_and_a_dynamic_table(tmp_path: Path) -> None:
    body = "\n".join(f"{key} = {value}" for key, (value, _) in VALID.items())
    body += '\n\n[tool.tflint-graph.dynamic]\nexamples = { "m:step" = "float32[2]" }\n'
    write_tree(tmp_path, {"pyproject.toml": pyproject(body), "m.py": PRINT_STEP})
    config = load_file(tmp_path / "pyproject.toml")
    assert str(config.dynamic.examples["m:step"]) == "float32[2]"
    assert config.per_file_ignores == {"tests/*": ("TFG101",), "*_pb2.py": ("ALL",)}
    assert config.root == tmp_path
    result = invoke(["m.py"], tmp_path)
    assert result.exit_code == 1
    assert codes(result.stdout) == {"TFG101"}


def test_empty_table_gives_the_defaults(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": "[tool.tflint-graph]\n"})
    config = load_file(tmp_path / "pyproject.toml")
    defaults = Config()
    assert (config.select, config.ignore, config.unroll_max, config.tiny_helper_max_ops) == (
        defaults.select,
        defaults.ignore,
        100,
        2,
    )


# -- errors ------------------------------------------------------------------------------


def test_unknown_key_is_one_line_naming_it(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": pyproject("selcet = ['TFG101']"), "m.py": PRINT_STEP})
    result = invoke(["m.py"], tmp_path)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "selcet" in lines[0]
    assert "pyproject.toml" in lines[0]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("select", "5"),
        ("select", '["E501"]'),
        ("select", "[1, 2]"),
        ("ignore", '["TFG10x"]'),
        ("extend-select", "true"),
        ("per-file-ignores", '["tests/*"]'),
        ("per-file-ignores", '{"tests/*" = 3}'),
        ("per-file-ignores", '{"tests/*" = ["F401"]}'),
        ("exclude", '"generated"'),
        ("extend-exclude", "[1]"),
        ("tiny-helper-max-ops", '"2"'),
        ("tiny-helper-max-ops", "-1"),
        ("tiny-helper-max-ops", "2.5"),
        ("unroll-max", "true"),
        ("serving-name-patterns", '"serve"'),
        ("extra-function-decorators", "{}"),
        ("dynamic", "3"),
        ("keras-version", '"4"'),
        ("keras-version", "true"),
        ("keras-version", '"keras3"'),
    ],
)
def test_bad_value_is_exit_2_naming_the_key(tmp_path: Path, key: str, value: str) -> None:
    write_tree(tmp_path, {"pyproject.toml": pyproject(f"{key} = {value}"), "m.py": PRINT_STEP})
    result = invoke(["m.py"], tmp_path)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"`{key}" in lines[0]


def test_table_that_is_not_a_table(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": '[tool]\n"tflint-graph" = 3\n', "m.py": PRINT_STEP})
    result = invoke(["m.py"], tmp_path)
    assert result.exit_code == 2
    assert "[tool.tflint-graph]" in result.stderr


def test_invalid_toml_exits_2(tmp_path: Path) -> None:
    broken = '[tool.tflint-graph]\nselect = ["TFG101"\n'
    write_tree(tmp_path, {"pyproject.toml": broken, "m.py": PRINT_STEP})
    result = invoke(["m.py"], tmp_path)
    assert result.exit_code == 2
    assert "not valid TOML" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_parse_table_raises_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown key `nope`"):
        parse_table({"nope": 1})
    with pytest.raises(ConfigError, match="`unroll-max`"):
        parse_table({"unroll-max": "many"})


# -- what the keys do --------------------------------------------------------------------


def test_per_file_ignores(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": pyproject(
                """
                [tool.tflint-graph.per-file-ignores]
                "tests/*" = ["TFG101"]
                "legacy_*.py" = ["TFG1"]
                "scripts/run.py" = ["TFG103", "TFG104"]
                """
            ),
            "tests/t.py": THREE_CODES,
            "legacy_x.py": THREE_CODES,
            "pkg/legacy_y.py": THREE_CODES,
            "scripts/run.py": THREE_CODES,
            "main.py": THREE_CODES,
        },
    )
    found = codes_in(invoke(["."], tmp_path).stdout)
    by_file: dict[str, set[str]] = {}
    for path, _, _, code in found:
        by_file.setdefault(path, set()).add(code)
    assert by_file == {
        "main.py": {"TFG101", "TFG103", "TFG104"},
        "scripts/run.py": {"TFG101"},
        "tests/t.py": {"TFG103", "TFG104"},
    }
    # Patterns are anchored at the config file's folder, whatever the working directory.
    inner = codes_in(invoke(["t.py"], tmp_path / "tests").stdout)
    assert {c for *_, c in inner} == {"TFG103", "TFG104"}


def test_exclude_and_extend_exclude_keys(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": pyproject('exclude = ["generated"]\nextend-exclude = ["old_*.py"]'),
            "generated/a.py": PRINT_STEP,
            "old_b.py": PRINT_STEP,
            "c.py": PRINT_STEP,
        },
    )
    assert [f[0] for f in codes_in(invoke(["."], tmp_path).stdout)] == ["c.py"]
    # --exclude replaces the configured exclude; extend-exclude still applies.
    out = invoke(["--exclude", "c.py", "."], tmp_path).stdout
    assert [f[0] for f in codes_in(out)] == ["generated/a.py"]
    out = invoke(["--extend-exclude", "c.py", "."], tmp_path).stdout
    assert codes_in(out) == []


def test_extra_function_decorators_make_a_project_wrapper_traced(tmp_path: Path) -> None:
    source = dedent(
        """
        from myproj.compile import graph_fn

        @graph_fn
        def step(x):
            print(x)
            return x
        """
    )
    assert lint_source(source) == []
    for entry in ("myproj.compile.graph_fn", "graph_fn"):
        config = Config(extra_function_decorators=(entry,))
        assert [(f.line, f.code) for f in lint_source(source, config=config)] == [(5, "TFG101")]
    write_tree(
        tmp_path,
        {
            "pyproject.toml": pyproject('extra-function-decorators = ["myproj.compile.graph_fn"]'),
            "m.py": source,
        },
    )
    assert codes_in(invoke(["m.py"], tmp_path).stdout) == [("m.py", 5, 5, "TFG101")]


# -- command line over configuration (ruff's precedence) ---------------------------------


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        ('select = ["TFG103"]', [], {"TFG103"}),
        ('select = ["TFG103"]', ["--select", "TFG101"], {"TFG101"}),
        # --select resets the selection: the configured ignore no longer applies.
        ('ignore = ["TFG101"]', ["--select", "TFG1"], {"TFG101", "TFG103", "TFG104"}),
        ('ignore = ["TFG101"]', [], {"TFG103", "TFG104"}),
        ('ignore = ["TFG101"]', ["--extend-select", "TFG101"], {"TFG101", "TFG103", "TFG104"}),
        ('select = ["TFG101"]', ["--ignore", "TFG1"], set()),
        ('select = ["TFG101", "TFG103"]', ["--ignore", "TFG103"], {"TFG101"}),
        ('select = ["TFG103"]\nextend-select = ["TFG104"]', [], {"TFG103", "TFG104"}),
        (
            'select = ["TFG103"]\nextend-select = ["TFG104"]',
            ["--extend-select", "TFG101"],
            {"TFG101", "TFG103", "TFG104"},
        ),
        ('ignore = ["TFG1"]', ["--extend-select", "TFG104"], {"TFG104"}),
        ('select = ["TFG1"]\nignore = ["TFG103"]', [], {"TFG101", "TFG104"}),
    ],
)
def test_command_line_over_config(
    tmp_path: Path, body: str, args: list[str], expected: set[str]
) -> None:
    write_tree(tmp_path, {"pyproject.toml": pyproject(body), "m.py": THREE_CODES})
    assert codes(invoke([*args, "m.py"], tmp_path).stdout) == expected
