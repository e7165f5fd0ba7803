"""Smoke test of the benchmark's tree generator (bench/ itself is a script, not a test)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO
from tflint_graph import lint_paths


def test_generated_tree_parses_mixes_tf_and_plain_code_and_has_findings(tmp_path: Path) -> None:
    out = tmp_path / "tree"
    subprocess.run(
        [sys.executable, str(REPO / "bench" / "generate.py"), "--lines", "3000", "--out", str(out)],
        check=True,
        capture_output=True,
    )
    modules = [p for p in out.rglob("*.py") if p.name != "__init__.py"]
    texts = [p.read_text(encoding="utf-8") for p in modules]
    for path, text in zip(modules, texts, strict=True):
        ast.parse(text, str(path))
    uses_tf = ["import tensorflow as tf" in text for text in texts]
    assert any(uses_tf) and not all(uses_tf)
    assert sum(text.count("\n") for text in texts) >= 2500
    assert list(lint_paths([out]))
