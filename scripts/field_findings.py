"""Lint a real project and print every finding in a form a reviewer can judge.

    python scripts/field_findings.py PROJECT [PROJECT ...] [--context 3] [--select TFG1]
    python scripts/field_findings.py PATH --gone BEFORE.json   # what a change stopped reporting

Each finding comes with the lines around it, why its code is traced (the chain) and an empty
verdict line (``real bug`` / ``wrong`` / ``true but unwanted``, with the reason) for the
judge to fill in; a count per code closes the report.  Third-party code stays outside the
repository: point this at an unpacked wheel or a checkout elsewhere.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from tflint_graph import Config, lint_paths
from tflint_graph.core.config import find_config, load_file
from tflint_graph.core.finding import Finding, Severity
from tflint_graph.core.noqa import source_lines
from tflint_graph.source.dependencies import with_keras_version
from tflint_graph.source.reading import decode


def _context(path: str, line: int, around: int, cell: int | None = None) -> list[str]:
    """The lines ``line - around`` .. ``line + around`` of ``path`` (of its ``cell``, 1-based,
    in a notebook), numbered, ``>`` on ``line``."""
    try:
        text = decode(Path(path).read_bytes(), path)
    except OSError:
        return []
    if not isinstance(text, str):
        return []
    if cell is not None:
        try:
            source = json.loads(text)["cells"][cell - 1].get("source", "")
        except (ValueError, LookupError, TypeError, AttributeError):
            return []
        text = "".join(source) if isinstance(source, list) else str(source)
    lines = source_lines(text)
    first, last = max(1, line - around), min(len(lines), line + around)
    return [
        f"{'>' if n == line else ' '} {n:5d} | {lines[n - 1].rstrip()}"
        for n in range(first, last + 1)
    ]


def _gone(before: Path, now: list[Finding]) -> list[Finding]:
    """The findings of an earlier run's JSON output that ``now`` no longer has."""
    data = json.loads(before.read_text(encoding="utf-8"))
    rows = data if isinstance(data, list) else data.get("findings", [])
    kept = {(f.path, f.line, f.code) for f in now}
    return [
        Finding(
            path=row["path"],
            line=row["line"],
            column=row["column"],
            code=row["code"],
            name=row.get("name", ""),
            message=row["message"],
            severity=Severity(row.get("severity", "error")),
            context=row.get("context"),
            chain=tuple(row.get("chain") or ()),
        )
        for row in rows
        if (row["path"], row["line"], row["code"]) not in kept
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--context", type=int, default=3, help="lines shown around a finding")
    parser.add_argument("--select", default="ALL", help="codes or prefixes, comma-separated")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--gone",
        type=Path,
        help="the JSON output (--output-format json) of an earlier run on the same paths: "
        "list the findings it had that this run no longer reports, to judge what was dropped",
    )
    args = parser.parse_args(argv)
    select = tuple(c.strip() for c in args.select.split(",") if c.strip())
    findings = []
    for path in args.paths:
        # Each project as its own user runs it: its own configuration and Keras version
        # (one run over several would apply the first project's to all).
        found = find_config([path])
        config = replace(load_file(found) if found is not None else Config(), select=select)
        config = with_keras_version(config, [path])
        findings += lint_paths([path], config, jobs=args.jobs)
    if args.gone is not None:
        findings = _gone(args.gone, findings)
    for number, f in enumerate(findings, start=1):
        print(f"### {number}. {f.code} {f.name} ({f.severity.value}) {f.location}")
        print()
        print(f"{f.message}")
        if f.chain:
            print(f"traced: {f.context} — {' -> '.join(f.chain)}")
        print()
        print("```")
        print("\n".join(_context(f.path, f.line, args.context, f.cell)))
        print("```")
        print()
        print("verdict: ")
        print()
    counts = Counter(f.code for f in findings)
    print(f"{len(findings)} findings: " + ", ".join(f"{c} {n}" for c, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
