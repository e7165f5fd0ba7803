"""Machine-readable output: SARIF 2.1.0 (validated against the official schema, vendored in
tests/fixtures/data), GitHub workflow commands and the versioned JSON format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest

from tests.cli_support import CLEAN, PRINT_STEP, THREE_CODES, invoke, write_tree
from tests.helpers import DATA, REPO
from tflint_graph import __version__
from tflint_graph.checks import rule_table
from tflint_graph.cli import check
from tflint_graph.core.finding import Finding, Severity
from tflint_graph.output import FORMATS, github, text
from tflint_graph.output.format import RunInfo, SourceLines
from tflint_graph.output.sarif import FINGERPRINT_KEY, sarif_log

jsonschema = pytest.importorskip("jsonschema")

FINDINGS_SCHEMA = REPO / "tflint_graph" / "schemas" / "findings-v1.json"


def _sarif_validator() -> Any:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


def _sarif(args: list[str], cwd: Path, expect_exit: int) -> dict[str, Any]:
    result = invoke(["--output-format", "sarif", *args], cwd)
    assert result.exit_code == expect_exit, result.output
    log = json.loads(result.stdout)
    _sarif_validator().validate(log)
    return log


# -- the registry ---------------------------------------------------------------------


def test_output_format_choices_are_the_registry() -> None:
    option = next(p for p in check.params if p.name == "output_format")
    assert isinstance(option.type, click.Choice)
    assert list(option.type.choices) == list(FORMATS)
    assert option.default == "text"


def test_show_source_reads_through_the_lines_it_is_given() -> None:
    class Lines(SourceLines):
        def line(self, path: str, number: int) -> str | None:
            return "\tprint(x)" if (path, number) == ("nowhere.py", 5) else None

    finding = Finding(
        path="nowhere.py",
        line=5,
        column=2,
        code="TFG101",
        name="print-in-traced",
        message="m",
        severity=Severity.WARNING,
    )
    out = text.render([finding], RunInfo(Lines(), show_source=True))
    assert out == "nowhere.py:5:2: TFG101 warning: m\n     print(x)\n     ^"


# -- SARIF ----------------------------------------------------------------------------


def test_sarif_with_findings_validates_and_locates_them(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/pkg/step.py": THREE_CODES})
    log = _sarif(["src"], tmp_path, expect_exit=1)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    results = run["results"]
    starts = [
        (r["ruleId"], region["startLine"], region["startColumn"])
        for r in results
        for region in [r["locations"][0]["physicalLocation"]["region"]]
    ]
    assert starts == [
        ("TFG101", 8, 5),
        ("TFG103", 9, 13),
        ("TFG104", 10, 9),
    ]
    rules = run["tool"]["driver"]["rules"]
    for r in results:
        location = r["locations"][0]["physicalLocation"]
        # Repo-relative, forward slashes, resolved against %SRCROOT% = the current directory.
        assert location["artifactLocation"] == {"uri": "src/pkg/step.py", "uriBaseId": "%SRCROOT%"}
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["message"]["text"]
        assert r["level"] == rules[r["ruleIndex"]]["defaultConfiguration"]["level"]
        region = location["region"]
        assert region["endLine"] >= region["startLine"]
        assert region["endColumn"] > region["startColumn"]
        assert r["partialFingerprints"][FINGERPRINT_KEY]
    root = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert root == tmp_path.resolve().as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"
    assert results[0]["properties"]["chain"]


def test_sarif_print_region_spans_the_call(tmp_path: Path) -> None:
    write_tree(tmp_path, {"step.py": PRINT_STEP})
    log = _sarif(["step.py"], tmp_path, expect_exit=1)
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    # Line 5 is "    print(x)": 1-based start column 5, endColumn one past the ")".
    assert region == {"startLine": 5, "startColumn": 5, "endLine": 5, "endColumn": 13}


def test_sarif_without_findings_validates_and_keeps_the_rules(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ok.py": CLEAN})
    log = _sarif(["ok.py"], tmp_path, expect_exit=0)
    assert log["runs"][0]["results"] == []
    assert len(log["runs"][0]["tool"]["driver"]["rules"]) == len(rule_table())


def test_sarif_rules_table_is_complete() -> None:
    driver = sarif_log([], RunInfo(SourceLines()))["runs"][0]["tool"]["driver"]
    assert driver["name"] == "tflint-graph"
    assert driver["version"] == __version__
    levels = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
    assert [r["id"] for r in driver["rules"]] == [code for code, *_ in rule_table()]
    for rule, (code, name, severity, summary) in zip(driver["rules"], rule_table(), strict=True):
        assert rule["name"] == name
        assert rule["shortDescription"]["text"] == summary
        assert rule["fullDescription"]["text"]
        assert rule["help"]["markdown"].startswith(f"# {code}: {name}")
        assert rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] == levels[severity]


def test_sarif_fingerprints_survive_a_line_inserted_above(tmp_path: Path) -> None:
    write_tree(tmp_path, {"step.py": THREE_CODES})
    before = _sarif(["step.py"], tmp_path, expect_exit=1)["runs"][0]["results"]
    write_tree(tmp_path, {"step.py": "# a new comment\n\n" + THREE_CODES})
    after = _sarif(["step.py"], tmp_path, expect_exit=1)["runs"][0]["results"]

    def prints(results: list[dict[str, Any]]) -> list[tuple[str, str]]:
        return [(r["ruleId"], r["partialFingerprints"][FINGERPRINT_KEY]) for r in results]

    assert prints(before) == prints(after)
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after]
    assert lines == [10, 11, 12]
    assert len({fp for _, fp in prints(before)}) == 3


def test_sarif_identical_lines_get_distinct_fingerprints(tmp_path: Path) -> None:
    source = PRINT_STEP.replace("print(x)\n", "print(x)\n    print(x)\n")
    write_tree(tmp_path, {"step.py": source})
    results = _sarif(["step.py"], tmp_path, expect_exit=1)["runs"][0]["results"]
    assert len(results) == 2
    assert len({r["partialFingerprints"][FINGERPRINT_KEY] for r in results}) == 2


def test_sarif_syntax_error_file_validates(tmp_path: Path) -> None:
    write_tree(tmp_path, {"bad.py": "def broken(:\n"})
    results = _sarif(["bad.py"], tmp_path, expect_exit=1)["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["TFG001"]
    assert results[0]["level"] == "error"


def test_sarif_uris_are_percent_encoded(tmp_path: Path) -> None:
    write_tree(tmp_path, {"my dir/step.py": PRINT_STEP})
    results = _sarif(["my dir"], tmp_path, expect_exit=1)["runs"][0]["results"]
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "my%20dir/step.py"


# -- GitHub workflow commands ---------------------------------------------------------


def test_github_annotation_per_finding(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/step.py": THREE_CODES})
    result = invoke(["--output-format", "github", "src"], tmp_path)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(
        "::warning file=src/step.py,line=8,col=5,endLine=8,endColumn=13,"
        "title=TFG101 print-in-traced::print() runs only while tracing step()"
    )
    assert "Found" not in result.stdout  # no summary line to confuse the runner


def test_github_escapes_message_and_properties() -> None:
    finding = Finding(
        path="a,b:c%.py",
        line=3,
        column=1,
        code="TFG301",
        name="some-rule",
        message="50% done\r\nnext: a, b",
        severity=Severity.INFO,
    )
    out = github.render([finding], RunInfo(SourceLines(), root=Path("/nonexistent-root")))
    head, message = out.split("::", 2)[1:]
    assert head.startswith("notice file=")
    assert "file=/" in head and head.endswith("a%2Cb%3Ac%25.py,line=3,col=1,title=TFG301 some-rule")
    # Message: % and newlines escaped, commas and colons kept.
    assert message == "50%25 done%0D%0Anext: a, b"


def test_github_clean_run_prints_nothing_and_exits_0(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ok.py": CLEAN})
    result = invoke(["--output-format", "github", "ok.py"], tmp_path)
    assert result.exit_code == 0
    assert result.stdout == ""


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_exit_zero_and_usage_errors_unchanged(tmp_path: Path, fmt: str) -> None:
    write_tree(tmp_path, {"step.py": PRINT_STEP})
    assert invoke(["--output-format", fmt, "--exit-zero", "step.py"], tmp_path).exit_code == 0
    assert invoke(["--output-format", fmt, "missing.py"], tmp_path).exit_code == 2


# -- JSON -----------------------------------------------------------------------------


def _findings_validator() -> Any:
    schema = json.loads(FINDINGS_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize(
    "files", [{"step.py": THREE_CODES, "bad.py": "def (:\n"}, {"ok.py": CLEAN}]
)
def test_json_output_matches_its_published_schema(tmp_path: Path, files: dict[str, str]) -> None:
    write_tree(tmp_path, files)
    result = invoke(["--output-format", "json", "."], tmp_path)
    doc = json.loads(result.stdout)
    _findings_validator().validate(doc)
    assert doc["schema_version"] == 1


def test_json_schema_rejects_a_wrong_document() -> None:
    bad = {"schema_version": 1, "tool": {"name": "tflint-graph", "version": "0"},
           "findings": [{"path": "a.py", "line": 0}], "statistics": {}}  # fmt: skip
    assert list(_findings_validator().iter_errors(bad))


def test_json_schema_ships_inside_the_wheel(tmp_path: Path) -> None:
    import zipfile

    wheel_module = pytest.importorskip("hatchling.builders.wheel")
    builder = wheel_module.WheelBuilder(str(REPO))
    built = list(builder.build(directory=str(tmp_path), versions=["standard"]))
    with zipfile.ZipFile(built[0]) as wheel:
        assert "tflint_graph/schemas/findings-v1.json" in wheel.namelist()
