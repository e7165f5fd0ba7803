"""The default format: ``path:line:col: CODE message`` (``path:cell N:line:col`` in a
notebook), which editors and terminals make clickable; ``--show-source`` adds the line and a
caret, ``--statistics`` replaces the findings with a count per code."""

from __future__ import annotations

from collections.abc import Sequence

from tflint_graph.core.finding import Finding
from tflint_graph.output.format import RunInfo, SourceLines, cell_of, statistics


def render(findings: Sequence[Finding], run: RunInfo) -> str:
    if run.statistics:  # a table to read, so no summary line
        return _statistics(findings)
    out = _findings(findings, run.lines if run.show_source else None)
    if run.summary:
        out.append(_found(len(findings)))
        if run.fixed is not None:
            out.append(f"Fixed {run.fixed} finding{'s' if run.fixed != 1 else ''}.")
    return "\n".join(out)


def _findings(findings: Sequence[Finding], source: SourceLines | None) -> list[str]:
    out: list[str] = []
    for f in findings:
        dynamic = f" {f.dynamic}" if f.dynamic is not None else ""
        out.append(f"{f.location}: {f.code} {f.message}{dynamic}")
        if source is not None and (line := source.line(f.path, f.line, *cell_of(f))) is not None:
            out.append(f"    {line.expandtabs(1)}")
            out.append("    " + " " * (f.column - 1) + "^")
    return out


def _statistics(findings: Sequence[Finding]) -> str:
    rows = statistics(findings)
    width = max((len(str(n)) for _, _, n in rows), default=1)
    return "\n".join(f"{n:>{width}}  {code}  {name}" for code, name, n in rows)


def _found(count: int) -> str:
    if count == 0:
        return "All checks passed!"
    return f"Found {count} finding{'s' if count != 1 else ''}."
