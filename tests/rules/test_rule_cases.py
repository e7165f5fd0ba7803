"""Bugbear-style cases: each file in tests/fixtures/cases marks its expected findings with
trailing ``# TFGnnn`` comments; everything unmarked must stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import CASES, expected, found

CASE_FILES = sorted(CASES.glob("*.py"))


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_case_file_gives_exactly_its_marked_findings(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    got = found(source, path.name)
    want = expected(source)
    missing = sorted(want - got)
    extra = sorted(got - want)
    assert not missing and not extra, f"missing={missing} unexpected={extra}"
