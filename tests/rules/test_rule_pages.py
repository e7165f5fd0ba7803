"""The rule reference in ``rules/``: one page per shipped code, and its examples are tests.

Every page's ``## Example`` module must raise its own code and nothing else; its
``## Use instead`` module must raise nothing at all.  TFG002 (unreadable-file) is the one
exception: its example cannot be a readable Python block, so the page shows the source in a
```` ```text ```` block and this suite writes it to a temporary file as Latin-1 bytes (not
valid UTF-8) and lints that file.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import REPO
from tflint_graph import Config, lint_file, lint_source
from tflint_graph.checks import ALL_RULES, rule_table
from tflint_graph.cli import main
from tflint_graph.output.fix import fix_source
from tflint_graph.output.pages import section_code

RULES_DIR = REPO / "rules"

HEADINGS = [
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "How dynamic mode confirms it",
    "References",
]

TABLE = rule_table()
CODES = [code for code, *_ in TABLE]
NAMES = {code: name for code, name, _, _ in TABLE}
SEVERITIES = {code: severity.value for code, _, severity, _ in TABLE}

# Codes whose Example is not a Python block (see the module docstring).
UNREADABLE_EXAMPLE = "TFG002"

_FENCED = re.compile(r"^```.*?^```", re.M | re.S)
_TEXT_BLOCK = re.compile(r"```text\n(.*?)```", re.S)


def page(code: str) -> str:
    return (RULES_DIR / f"{code}.md").read_text(encoding="utf-8")


def headings(text: str) -> list[str]:
    """``## `` headings outside fenced code blocks, in order."""
    return re.findall(r"^## (.+?)\s*$", _FENCED.sub("", text), re.M)


def section(text: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no '## {heading}' section"
    return match.group(1)


def only_block(text: str, heading: str) -> str:
    blocks = section_code(text, heading)
    assert len(blocks) == 1, f"'## {heading}' must hold exactly one ```python block"
    return blocks[0]


def describe(findings: list) -> list[str]:
    return [f"{f.line}:{f.column} {f.code} {f.message}" for f in findings]


# --- every code has a well-formed page ------------------------------------------------


def test_rule_table_is_not_empty() -> None:
    assert "TFG001" in CODES
    assert "TFG101" in CODES


def test_no_page_without_a_code() -> None:
    pages = {p.stem for p in RULES_DIR.glob("*.md")}
    assert pages - set(CODES) == set()


@pytest.mark.parametrize("code", CODES)
def test_page_exists(code: str) -> None:
    assert (RULES_DIR / f"{code}.md").is_file(), f"rules/{code}.md is missing"


@pytest.mark.parametrize("code", CODES)
def test_page_header(code: str) -> None:
    lines = page(code).splitlines()
    assert lines[0] == f"# {code}: {NAMES[code]}"
    assert f"Severity: {SEVERITIES[code]}" in lines[1:4]
    assert any(line.startswith("Fix: ") and len(line) > len("Fix: ") for line in lines[1:4])


def test_page_titles_match_rule_classes() -> None:
    for rule in ALL_RULES:
        assert page(rule.code).splitlines()[0] == f"# {rule.code}: {rule.name}"


# The rules that can rewrite what they report: their pages say which cases are safe.
FIXABLE = {rule.code: rule for rule in ALL_RULES if rule.FIX_SAFETY is not None}


@pytest.mark.parametrize("code", CODES)
def test_page_has_required_sections_in_order(code: str) -> None:
    expected = list(HEADINGS)
    if KERAS2 in headings(page(code)):  # optional: what differs under Keras 2
        expected.insert(expected.index("Use instead") + 1, KERAS2)
    if code in FIXABLE:  # where ruff puts it: after the examples
        expected.insert(expected.index("Use instead") + 1, "Fix safety")
    assert headings(page(code)) == expected


@pytest.mark.parametrize("code", CODES)
def test_page_references_are_links(code: str) -> None:
    assert re.search(r"\]\(https://[^)\s]+\)", section(page(code), "References"))


# --- the examples are executed ----------------------------------------------------------

PYTHON_EXAMPLES = [c for c in CODES if c != UNREADABLE_EXAMPLE]


@pytest.mark.parametrize("code", PYTHON_EXAMPLES)
def test_example_raises_exactly_its_code(code: str) -> None:
    findings = lint_source(only_block(page(code), "Example"), "example.py")
    assert findings, f"{code}: the Example raises nothing"
    assert {f.code for f in findings} == {code}, describe(findings)


@pytest.mark.parametrize("code", CODES)
def test_use_instead_raises_nothing(code: str) -> None:
    findings = lint_source(only_block(page(code), "Use instead"), "example.py")
    assert findings == [], describe(findings)


KERAS2 = "Under Keras 2"
KERAS2_PAGES = [c for c in CODES if KERAS2 in headings(page(c))]


@pytest.mark.parametrize("code", KERAS2_PAGES)
def test_keras2_example_raises_nothing_under_keras3_settings(code: str) -> None:
    """A page's Keras 2 module (on ``tf_keras`` bases) is analysed as Keras 2 whatever
    ``keras-version`` says; what it shows is fine there."""
    block = only_block(page(code), KERAS2)
    assert "tf_keras" in block, "the Keras 2 example must use tf_keras"
    findings = lint_source(block, "example.py", Config(keras_version="3"))
    assert findings == [], describe(findings)


def test_unreadable_file_example_written_as_latin1_gives_tfg002(tmp_path: Path) -> None:
    text = page(UNREADABLE_EXAMPLE)
    assert section_code(text, "Example") == [], "TFG002's example must not be a Python block"
    blocks = _TEXT_BLOCK.findall(section(text, "Example"))
    assert len(blocks) == 1, "TFG002's Example holds exactly one ```text block"
    data = blocks[0].encode("latin-1")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")  # the example must really be invalid UTF-8
    target = tmp_path / "example.py"
    target.write_bytes(data)
    findings = lint_file(target)
    assert findings, "writing the example as Latin-1 raises nothing"
    assert {f.code for f in findings} == {UNREADABLE_EXAMPLE}, describe(findings)


def test_unreadable_file_use_instead_saved_as_utf8_gives_nothing(tmp_path: Path) -> None:
    target = tmp_path / "example.py"
    target.write_bytes(only_block(page(UNREADABLE_EXAMPLE), "Use instead").encode("utf-8"))
    assert lint_file(target) == []


# --- the CLI prints the same pages ------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_cli_rule_prints_the_page(code: str) -> None:
    result = CliRunner().invoke(main, ["rule", code])
    assert result.exit_code == 0, result.output
    assert result.output == page(code).rstrip("\n") + "\n"


def test_cli_rule_accepts_lowercase_code() -> None:
    result = CliRunner().invoke(main, ["rule", "tfg101"])
    assert result.exit_code == 0
    assert result.output.startswith("# TFG101: print-in-traced")


@pytest.mark.parametrize("code", ["TFG999", "E501", "nonsense"])
def test_cli_rule_unknown_code_is_a_usage_error(code: str) -> None:
    result = CliRunner().invoke(main, ["rule", code])
    assert result.exit_code == 2
    assert "unknown rule code" in result.output
    assert code in result.output
    assert "TFG101" in result.output  # it lists the known codes


def test_cli_rules_lists_every_code() -> None:
    result = CliRunner().invoke(main, ["rules"])
    assert result.exit_code == 0, result.output
    listed = {line.split()[0] for line in result.output.splitlines() if line.strip()}
    assert listed == set(CODES)
    for code, name in NAMES.items():
        assert re.search(rf"^{code}\s+{re.escape(name)}\s", result.output, re.M)


# --- the pages ship in the wheel --------------------------------------------------------


def test_pages_ship_inside_the_wheel(tmp_path: Path) -> None:
    wheel_module = pytest.importorskip("hatchling.builders.wheel")
    builder = wheel_module.WheelBuilder(str(REPO))
    built = list(builder.build(directory=str(tmp_path), versions=["standard"]))
    assert len(built) == 1
    with zipfile.ZipFile(built[0]) as wheel:
        names = set(wheel.namelist())
    for code in CODES:
        assert f"tflint_graph/_rule_pages/{code}.md" in names


@pytest.mark.parametrize("code", CODES)
def test_page_states_fix_safety(code: str) -> None:
    header = page(code).split("\n## ", 1)[0]
    stated = [line for line in header.splitlines() if line.startswith("Fix safety: ")]
    assert len(stated) == 1
    rule = FIXABLE.get(code)
    if rule is None:
        assert stated[0].startswith("Fix safety: no automatic fix")
    else:  # named with the option that applies it
        option = "`--unsafe-fixes`" if rule.FIX_SAFETY == "unsafe" else "`--fix`"
        assert option in stated[0]


_LABELLED_BLOCK = re.compile(r"^(.*?)\n\n```python\n(.*?)```", re.M | re.S)


def fix_examples(code: str) -> list[tuple[str, str]]:
    """The ```python blocks of the page's Fix safety section, each with the paragraph
    just above it ("Before:", "With `--fix`:", "With `--unsafe-fixes`:")."""
    text = section(page(code), "Fix safety")
    return [
        (label.strip().rsplit("\n\n", 1)[-1], block)
        for label, block in _LABELLED_BLOCK.findall(text)
    ]


@pytest.mark.parametrize("code", sorted(FIXABLE))
def test_fix_safety_examples_are_what_the_fixes_write(code: str) -> None:
    examples = fix_examples(code)
    assert examples and examples[0][0] == "Before:"
    before = examples[0][1]
    findings = [f for f in lint_source(before, f"{code}.py") if f.code == code]
    assert findings, "the Before example must be reported"
    assert len(examples) > 1
    for label, after in examples[1:]:
        assert label in ("With `--fix`:", "With `--unsafe-fixes`:"), label
        unsafe = "--unsafe-fixes" in label
        assert fix_source(before, findings, unsafe=unsafe)[0] == after, label
    # Everything the most permissive option fixes is gone: nothing left of the rule.
    assert [f for f in lint_source(examples[-1][1], "after.py") if f.code == code] == []
