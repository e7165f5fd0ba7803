"""Output formats.  Text is ``path:line:col: CODE message``, clickable in editors."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from tflint_graph.finding import Finding
from tflint_graph.noqa import source_lines

JSON_SCHEMA_VERSION = 1


def _source_line(path: str, line: int, cache: dict[str, list[str]]) -> str | None:
    """Physical line ``line`` of ``path``, decoded as the linter decoded it."""
    if path not in cache:
        from tflint_graph.engine import decode

        try:
            decoded = decode(Path(path).read_bytes(), path)
        except OSError:
            decoded = ""
        cache[path] = source_lines(decoded) if isinstance(decoded, str) else []
    lines = cache[path]
    return lines[line - 1] if 0 < line <= len(lines) else None


def format_text(findings: Sequence[Finding], show_source: bool = False) -> str:
    out: list[str] = []
    cache: dict[str, list[str]] = {}
    for f in findings:
        out.append(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}")
        if show_source:
            src = _source_line(f.path, f.line, cache)
            if src is not None:
                expanded = src.expandtabs(1)
                out.append(f"    {expanded}")
                out.append("    " + " " * (f.column - 1) + "^")
    return "\n".join(out)


def statistics(findings: Sequence[Finding]) -> list[tuple[str, str, int]]:
    counts = Counter((f.code, f.name) for f in findings)
    return [(code, name, n) for (code, name), n in sorted(counts.items())]


def format_statistics(findings: Sequence[Finding]) -> str:
    rows = statistics(findings)
    width = max((len(str(n)) for _, _, n in rows), default=1)
    return "\n".join(f"{n:>{width}}  {code}  {name}" for code, name, n in rows)


def format_json(findings: Sequence[Finding], version: str) -> str:
    """Versioned JSON: ``{"schema_version", "tool", "findings", "statistics"}``."""
    doc = {
        "schema_version": JSON_SCHEMA_VERSION,
        "tool": {"name": "tflint-graph", "version": version},
        "findings": [f.to_dict() for f in findings],
        "statistics": {code: n for code, _, n in statistics(findings)},
    }
    return json.dumps(doc, indent=2)
