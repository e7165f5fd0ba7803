"""Multi-file projects: each directory in tests/fixtures/projects is one run of ``lint_paths``.

Expected findings are trailing ``# TFGnnn`` comments in any of its files (the convention of
tests/fixtures/cases); everything unmarked must stay silent.  These exercise what one file alone
cannot: callees and tf.functions imported from other modules of the run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import PROJECTS, expected
from tflint_graph import Config, lint_paths

PROJECT_DIRS = sorted(p for p in PROJECTS.iterdir() if p.is_dir())


def _marked(root: Path) -> set[tuple[str, int, str]]:
    marks = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        marks |= {(rel, line, code) for line, code in expected(path.read_text("utf-8"))}
    return marks


@pytest.mark.parametrize("fixture", PROJECT_DIRS, ids=[p.name for p in PROJECT_DIRS])
def test_project_gives_exactly_its_marked_findings(fixture: Path, tmp_path: Path) -> None:
    # Linted as its own checkout, as a user runs it: inside this repository every file lies
    # under `tests/`, where TFG402 is quiet.
    root = tmp_path / fixture.name
    shutil.copytree(fixture, root, ignore=shutil.ignore_patterns("__pycache__"))
    got = {
        (Path(f.path).relative_to(root).as_posix(), f.line, f.code)
        for f in lint_paths([root], Config())
    }
    want = _marked(root)
    assert not (want - got) and not (got - want), (
        f"missing={sorted(want - got)} unexpected={sorted(got - want)}"
    )
