"""The labelled corpora stay above the precision/recall bar they were built to.

The corpora were written blind from SPEC.md (tests/fixtures/corpus: TFG1xx; fixtures/corpus_tfg34:
TFG3xx/TFG4xx and cross-module callees); ``scripts/evaluate_corpus.py`` prints the full
per-code report.  This test is the regression guard: a change that makes a rule cry wolf or
go deaf on them fails here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.helpers import CORPUS, REPO, REPO_FIXTURES


def _evaluator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "evaluate_corpus", REPO / "scripts" / "evaluate_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "corpus, prefixes, precision, recall",
    [
        (CORPUS, "TFG1", 0.9, 0.8),
        (REPO_FIXTURES / "corpus_tfg34", "TFG3,TFG4", 0.9, 0.8),
        (REPO_FIXTURES / "corpus_tfg34", "TFG1,TFG2", 0.9, 0.8),
    ],
    ids=lambda value: value.relative_to(REPO).as_posix() if isinstance(value, Path) else None,
)
def test_precision_and_recall_stay_above_the_bar(
    corpus: Path, prefixes: str, precision: float, recall: float
) -> None:
    ev = _evaluator()
    codes = ev.select_codes(prefixes)
    root = corpus
    labels = ev.read_labels(root, codes)
    found = ev.run_tool(root, codes)
    tp = len(labels & found)
    assert labels, "the corpus has no labels for these codes"
    assert tp / max(len(found), 1) >= precision, f"false positives: {sorted(found - labels)}"
    assert tp / len(labels) >= recall, f"false negatives: {sorted(labels - found)}"
