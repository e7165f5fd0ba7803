"""Hostile notebooks (SPEC §3, §5): each is linted next to a known-bad Python file whose
finding must survive; the notebook gives a clear TFG001/TFG002 finding or its own findings,
never a traceback, and ``--fix`` never writes a notebook it cannot read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import PRINT_STEP, invoke, run_process, write_tree
from tests.helpers import notebook

GOOD = "good.py:5:5: TFG101"
TRACED = "import tensorflow as tf\n\n@tf.function\ndef step(x):\n    print(x)\n    return x\n"


def _lint(tmp_path: Path, content: str | bytes, *args: str) -> tuple[int, list[str]]:
    write_tree(tmp_path, {"good.py": PRINT_STEP, "nb.ipynb": content})
    result = invoke([".", "--no-cache", "-q", *args], tmp_path)
    lines = result.output.splitlines()
    assert GOOD in "\n".join(lines), result.output
    return result.exit_code, [ln for ln in lines if ln.startswith("nb.ipynb")]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "nb.ipynb:1:1: TFG001 error: not a valid notebook: invalid JSON: Expecting value"),
        (
            '{\n "cells": [\n  {"cell_type": "code" "source": []}\n ]\n}\n',
            # where the comma is missing: before "source"
            "nb.ipynb:3:24: TFG001 error: not a valid notebook: invalid JSON: "
            "Expecting ',' delimiter",
        ),
        ("[1, 2, 3]\n", 'nb.ipynb:1:1: TFG001 error: not a Jupyter notebook: no "cells" list'),
        (
            '{"name": "package.json"}',
            'nb.ipynb:1:1: TFG001 error: not a Jupyter notebook: no "cells"',
        ),
        (
            '{"nbformat": 2, "worksheets": []}',
            "nb.ipynb:1:1: TFG001 error: unsupported notebook format: nbformat 2",
        ),
        (
            '{"nbformat": 4, "cells": [{"cell_type": "code", "source": 42}]}',
            "nb.ipynb:1:1: TFG001 error: not a valid notebook: the source of cell 1 is not text",
        ),
        (
            '{"nbformat": 4, "cells": ["print(1)"]}',
            "nb.ipynb:1:1: TFG001 error: not a valid notebook: cell 1 is no object",
        ),
        (
            '{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "nb.ipynb:1:1: TFG001 error: not a valid",
        ),
        (
            notebook(TRACED).encode("utf-8").replace(b"step", b"st\xe9p", 1),
            # the byte's place in the file: `    "def st\xe9p(x):\n",` on line 12
            "nb.ipynb:12:12: TFG002 error: not valid UTF-8 text (byte 0xe9",
        ),
        (b'{"cells": []}\x00', "nb.ipynb:1:1: TFG002 error: binary file"),
    ],
)
def test_a_bad_notebook_is_one_clear_finding(
    tmp_path: Path, content: str | bytes, expected: str
) -> None:
    status, lines = _lint(tmp_path, content)
    assert status == 1
    assert len(lines) == 1 and lines[0].startswith(expected), lines


@pytest.mark.parametrize(
    "content",
    [
        notebook(),
        notebook(("markdown", "# Only prose\n"), ("raw", "print(1)\n")),
        notebook("", "\n\n"),
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
    ],
)
def test_a_notebook_without_code_has_no_findings(tmp_path: Path, content: str) -> None:
    status, lines = _lint(tmp_path, content)
    assert status == 1  # good.py's finding
    assert lines == []


def test_a_syntax_error_in_a_cell_is_reported_in_that_cell(tmp_path: Path) -> None:
    status, lines = _lint(tmp_path, notebook(TRACED, "x = (1,\n", "print('fine')\n"))
    # The cell that does not parse on its own gives its syntax error; the others are still
    # analysed (a .py file that does not parse gives its syntax error only).
    assert status == 1
    assert lines == [
        "nb.ipynb:cell 1:5:5: TFG101 [*] warning: print() runs only while tracing step(); "
        "use tf.print() to print on every call",
        "nb.ipynb:cell 2:1:5: TFG001 error: syntax error: '(' was never closed",
    ]


def test_a_syntax_error_names_the_line_it_was_detected_at_in_its_cell(tmp_path: Path) -> None:
    broken = "name = 'demo'\nrun(name, serializer='pkg.Serializer)\n"
    status, lines = _lint(tmp_path, notebook(TRACED, "x = 1\n", broken))
    assert status == 1
    assert lines[-1] == (
        "nb.ipynb:cell 3:2:22: TFG001 error: syntax error: unterminated string literal "
        "(detected at cell 3, line 2)"
    )


def test_many_megabytes_of_outputs_are_read(tmp_path: Path) -> None:
    doc = json.loads(notebook(TRACED))
    doc["cells"][0]["outputs"] = [
        {"output_type": "stream", "name": "stdout", "text": ["x" * 1000 + "\n"] * 20_000},
        {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo" * 500_000}},
    ]
    content = json.dumps(doc, indent=1)
    assert len(content) > 25_000_000
    status, lines = _lint(tmp_path, content)
    assert status == 1
    assert lines == [
        "nb.ipynb:cell 1:5:5: TFG101 [*] warning: print() runs only while tracing step(); "
        "use tf.print() to print on every call"
    ]
    # --fix rewrites the cell and leaves the outputs' bytes alone.
    invoke(["nb.ipynb", "--no-cache", "--fix"], tmp_path)
    after = (tmp_path / "nb.ipynb").read_text(encoding="utf-8")
    assert after == content.replace('"    print(x)\\n"', '"    tf.print(x)\\n"')


def test_a_utf8_bom_and_non_ascii_text_are_kept_by_fix(tmp_path: Path) -> None:
    cell = TRACED.replace("print(x)", "print('größe', x)")
    content = "\ufeff" + notebook(cell)
    write_tree(tmp_path, {"nb.ipynb": content.encode("utf-8")})
    result = invoke(["nb.ipynb", "--no-cache", "--fix"], tmp_path)
    assert "Fixed 1 finding." in result.output
    data = (tmp_path / "nb.ipynb").read_bytes()
    assert data == content.replace("print('größe'", "tf.print('größe'").encode("utf-8")


def test_an_ascii_notebook_stays_ascii_after_fix(tmp_path: Path) -> None:
    doc = json.loads(notebook(TRACED.replace("print(x)", "print('größe', x)")))
    content = json.dumps(doc, indent=1, ensure_ascii=True)
    write_tree(tmp_path, {"nb.ipynb": content})
    invoke(["nb.ipynb", "--no-cache", "--fix"], tmp_path)
    after = (tmp_path / "nb.ipynb").read_text(encoding="utf-8")
    assert after == content.replace("print('gr", "tf.print('gr")
    assert after.isascii()


@pytest.mark.parametrize(
    "content",
    [
        '{"cells": [{"cell_type": "code", "source": ["print(1)"]}, ',
        notebook(TRACED).encode("utf-8").replace(b"return", b"r\xe9turn"),
    ],
)
def test_fix_never_writes_a_notebook_it_cannot_read(tmp_path: Path, content: str | bytes) -> None:
    write_tree(tmp_path, {"nb.ipynb": content})
    before = (tmp_path / "nb.ipynb").read_bytes()
    invoke(["nb.ipynb", "--no-cache", "--fix"], tmp_path)
    assert (tmp_path / "nb.ipynb").read_bytes() == before


def test_a_real_process_lints_bad_and_good_notebooks_with_any_jobs(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        f"nb{i}.ipynb": notebook(TRACED) if i % 2 else '{"cells": ' for i in range(20)
    }
    write_tree(tmp_path, {**files, "good.py": PRINT_STEP})
    one = run_process([".", "--no-cache", "-j", "1"], tmp_path)
    two = run_process([".", "--no-cache", "-j", "2"], tmp_path)
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
    assert one.stdout.count("TFG001 error: not a valid notebook") == 10
    assert one.stdout.count(":cell 1:5:5: TFG101") == 10
    assert GOOD in one.stdout
