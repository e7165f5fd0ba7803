"""Multi-file projects: each directory in tests/projects is one run of ``lint_paths``.

Expected findings are trailing ``# TFGnnn`` comments in any of its files (the convention of
tests/cases); everything unmarked must stay silent.  These exercise what one file alone
cannot: callees and tf.functions imported from other modules of the run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import expected
from tflint_graph import Config, lint_paths

PROJECTS = sorted(p for p in (Path(__file__).parent / "projects").iterdir() if p.is_dir())


def _marked(root: Path) -> set[tuple[str, int, str]]:
    marks = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        marks |= {(rel, line, code) for line, code in expected(path.read_text("utf-8"))}
    return marks


@pytest.mark.parametrize("root", PROJECTS, ids=[p.name for p in PROJECTS])
def test_project(root: Path) -> None:
    got = {
        (Path(f.path).relative_to(root).as_posix(), f.line, f.code)
        for f in lint_paths([root], Config())
    }
    want = _marked(root)
    assert not (want - got) and not (got - want), (
        f"missing={sorted(want - got)} unexpected={sorted(got - want)}"
    )
