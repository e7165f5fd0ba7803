"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` per finding,
which the runner turns into an annotation on the pull request's diff."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tflint_graph.core.finding import Finding, Severity
from tflint_graph.output.format import RunInfo, relative_to_root

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render(findings: Sequence[Finding], run: RunInfo) -> str:
    """Paths relative to ``run.root`` with forward slashes (absolute outside it); no summary
    line, which the runner would show as log noise.  A notebook finding is placed where its
    code sits in the ``.ipynb`` file, the cell named in the title."""
    root = run.root.resolve()
    out: list[str] = []
    for f in findings:
        file = relative_to_root(f.path, root) or Path(f.path).resolve().as_posix()
        start: tuple[int, int] | None = (f.line, f.column)
        end = (
            (f.end_line, f.end_column)
            if f.end_line is not None and f.end_column is not None
            else None
        )
        title = f"{f.code} {f.name}"
        if f.cell is not None:
            # The annotation sits on the notebook's JSON text; the title names the cell.
            start, end = run.lines.file_position(f), run.lines.file_position(f, end=True)
            title += f" (cell {f.cell}, line {f.line}, column {f.column})"
        props = [("file", file)]
        if start is not None:
            props += [("line", str(start[0])), ("col", str(start[1]))]
            if end is not None and end >= start:
                props += [("endLine", str(end[0])), ("endColumn", str(end[1]))]
        props.append(("title", title))
        rendered = ",".join(f"{k}={_escape_property(v)}" for k, v in props)
        message = f"{f.message} {f.dynamic}" if f.dynamic is not None else f.message
        out.append(f"::{_LEVEL[f.severity]} {rendered}::{_escape_data(message)}")
    return "\n".join(out)


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")
