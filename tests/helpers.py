"""Shared test helpers: expected findings written as ``# TFGnnn`` comments on lines."""

from __future__ import annotations

import re
import textwrap

from tflint_graph import Config, lint_source

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
