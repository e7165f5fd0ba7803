"""Every rule's own VALID/INVALID examples (the examples are the rule's documentation)."""

from __future__ import annotations

import pytest

from tests.helpers import expected, found
from tflint_graph.checks import ALL_RULES

VALID = [(r.code, i, src) for r in ALL_RULES for i, src in enumerate(r.VALID)]
INVALID = [(r.code, i, src) for r in ALL_RULES for i, src in enumerate(r.INVALID)]


@pytest.mark.parametrize(
    ("code", "index", "source"), VALID, ids=[f"{c}-valid-{i}" for c, i, _ in VALID]
)
def test_valid_example_has_no_finding_of_its_rule(code: str, index: int, source: str) -> None:
    assert {f for f in found(source) if f[1] == code} == set()


@pytest.mark.parametrize(
    ("code", "index", "source"), INVALID, ids=[f"{c}-invalid-{i}" for c, i, _ in INVALID]
)
def test_invalid_example_has_exactly_the_marked_findings(
    code: str, index: int, source: str
) -> None:
    marked = {e for e in expected(source) if e[1] == code}
    assert marked, "an INVALID example must mark at least one line"
    assert {f for f in found(source) if f[1] == code} == marked


def test_every_rule_has_examples_both_ways() -> None:
    for rule in ALL_RULES:
        assert len(rule.VALID) >= 2, rule.code
        assert len(rule.INVALID) >= 2, rule.code
