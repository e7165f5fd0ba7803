"""Small projects for dynamic-mode tests: written to a folder, run once with ``--dynamic``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

JSON = ("--output-format", "json", "--jobs", "2")


def write(root: Path, files: dict[str, str]) -> None:
    """``files`` (path -> dedented text) under ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def dynamic_findings(root: Path, target: str) -> dict[tuple[str, int, str], dict]:
    """``tflint-graph TARGET --dynamic`` from ``root`` (findings expected: exit 1), by
    (path, line, code)."""
    proc = subprocess.run(
        [sys.executable, "-m", "tflint_graph", target, "--dynamic", "--no-cache", *JSON],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    findings = json.loads(proc.stdout)["findings"]
    return {(Path(f["path"]).as_posix(), f["line"], f["code"]): f for f in findings}
