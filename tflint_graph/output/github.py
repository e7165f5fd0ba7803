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
    line, which the runner would show as log noise."""
    root = run.root.resolve()
    out: list[str] = []
    for f in findings:
        file = relative_to_root(f.path, root) or Path(f.path).resolve().as_posix()
        props = [
            ("file", file),
            ("line", str(f.line)),
            ("col", str(f.column)),
        ]
        if f.end_line is not None and f.end_column is not None:
            props += [("endLine", str(f.end_line)), ("endColumn", str(f.end_column))]
        props.append(("title", f"{f.code} {f.name}"))
        rendered = ",".join(f"{k}={_escape_property(v)}" for k, v in props)
        message = f"{f.message} {f.dynamic}" if f.dynamic is not None else f.message
        out.append(f"::{_LEVEL[f.severity]} {rendered}::{_escape_data(message)}")
    return "\n".join(out)


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")
