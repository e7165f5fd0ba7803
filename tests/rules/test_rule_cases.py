"""Bugbear-style cases: each file in tests/cases marks its expected findings with
trailing ``# TFGnnn`` comments; everything unmarked must stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import expected, found

CASES = sorted((Path(__file__).parent / "cases").glob("*.py"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case_file(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    got = found(source, path.name)
    want = expected(source)
    missing = sorted(want - got)
    extra = sorted(got - want)
    assert not missing and not extra, f"missing={missing} unexpected={extra}"
