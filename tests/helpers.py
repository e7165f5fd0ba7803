"""Shared test helpers: where the test data lives, and expected findings written as
``# TFGnnn`` comments on lines."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from tflint_graph import Config, lint_source

# The repository root (scripts/, bench/, rules/, the package's schemas).
REPO = Path(__file__).resolve().parent.parent
# The one root of the tests' own data.
FIXTURES = REPO / "tests" / "fixtures"
CASES = FIXTURES / "cases"  # single-file rule cases, expectations as ``# TFGnnn`` comments
CORPUS = FIXTURES / "corpus"  # the labelled TFG1xx evaluation corpus
PROJECTS = FIXTURES / "projects"  # multi-file projects, one ``lint_paths`` run each
DATA = FIXTURES / "data"  # vendored schemas
# The user-facing demo data at the repository root (the README's first command, dynamic mode,
# the TFG3xx/4xx corpus): tests read it, it is not theirs.
REPO_FIXTURES = REPO / "fixtures"
DEMO = REPO_FIXTURES / "demo"

MARKER = re.compile(r"#\s*(TFG\d{3}(?:\s*,\s*TFG\d{3})*)\s*$")


def expected(source: str) -> set[tuple[int, str]]:
    """(line, code) for every trailing ``# TFG101`` (or ``# TFG101, TFG103``) comment."""
    out = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = MARKER.search(line)
        if match:
            for code in re.split(r"\s*,\s*", match.group(1)):
                out.add((number, code))
    return out


def found(
    source: str, path: str = "example.py", config: Config | None = None
) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in lint_source(source, path, config)}


def dedent(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


def notebook(*cells: str | tuple[str, str], indent: int | None = 1, **top: object) -> str:
    """The JSON text of a Jupyter notebook (nbformat 4, as Jupyter writes it: each source a
    list of lines): a ``str`` is a code cell, ``(cell_type, text)`` any cell."""
    import json

    listed = []
    for cell in cells:
        kind, text = ("code", cell) if isinstance(cell, str) else cell
        entry: dict[str, object] = {"cell_type": kind, "metadata": {}}
        if kind == "code":
            entry.update(execution_count=None, outputs=[])
        entry["source"] = text.splitlines(keepends=True)
        listed.append(entry)
    doc = {
        "cells": listed,
        "metadata": {"kernelspec": {"display_name": "Python 3", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
        **top,
    }
    return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"
