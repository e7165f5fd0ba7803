"""What a run hands users: output formats, the fixes applied, the rule reference pages.

A format is one module here whose ``render(findings, run) -> str`` (``base.Format``) returns
the text to print, and one row in ``FORMATS``; ``--output-format`` offers the rows.
"""

from __future__ import annotations

from tflint_graph.output import github, json, sarif, text
from tflint_graph.output.format import Format, RunInfo, SourceLines

# By name, in the order ``--help`` lists them.
FORMATS: dict[str, Format] = {
    "text": text.render,
    "json": json.render,
    "sarif": sarif.render,
    "github": github.render,
}

__all__ = ["FORMATS", "Format", "RunInfo", "SourceLines"]
