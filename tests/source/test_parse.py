"""The libcst parse skips libcst's node checks on source CPython accepted
(``source.parse.nodes_unchecked``): the trees must be the ones a checked parse gives, and the
checks must be back on for everyone else once the parse is done."""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
import pytest

from tests.helpers import CASES, REPO, REPO_FIXTURES
from tflint_graph.source.parse import parse
from tflint_graph.source.store import STORE

SOURCES = sorted(
    p for folder in (REPO_FIXTURES, CASES, REPO / "tflint_graph") for p in folder.rglob("*.py")
)


def _engine_parse(source: str) -> cst.Module:
    STORE.clear()  # a remembered tree would not be parsed again
    parsed = parse(source, "m.py")
    assert isinstance(parsed, cst.Module)
    return parsed


@pytest.mark.parametrize("path", SOURCES[::7], ids=lambda p: p.relative_to(REPO).as_posix())
def test_unchecked_parse_gives_the_checked_tree(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TFLINT_GRAPH_LIBCST_PARSE", "1")  # libcst's parser, not fromast
    source = path.read_text(encoding="utf-8")
    ours = _engine_parse(source)
    checked = cst.parse_module(source)
    assert ours.deep_equals(checked)
    assert ours.code == source


def test_checks_are_back_after_a_parse() -> None:
    _engine_parse("import tensorflow as tf\n\n@tf.function\ndef f(x):\n    return x\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not an identifier")


def test_checks_are_back_after_a_parse_that_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFLINT_GRAPH_LIBCST_PARSE", "1")
    STORE.clear()
    # CPython accepts it (the checks go off); a libcst that rejects it must not leave them off.
    source = "x = 1\n"
    original = cst.parse_module

    def failing(text: str) -> cst.Module:
        raise RuntimeError("boom")

    cst.parse_module = failing  # type: ignore[assignment]
    try:
        found = parse(source, "m.py")
    finally:
        cst.parse_module = original  # type: ignore[assignment]
    assert not isinstance(found, cst.Module) and found.code == "TFG001"
    with pytest.raises(cst.CSTValidationError):
        cst.Name("1x")


def test_source_cpython_rejects_is_parsed_with_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFLINT_GRAPH_LIBCST_PARSE", "1")
    seen: list[bool] = []
    original = cst.parse_module

    def spying(text: str) -> cst.Module:
        seen.append("__post_init__" in cst.CSTNode.__dict__ and _checks_on())
        return original(text)

    STORE.clear()
    cst.parse_module = spying  # type: ignore[assignment]
    try:
        parse("def f(:\n", "m.py")
        parse("y = 2\n", "m.py")
    finally:
        cst.parse_module = original  # type: ignore[assignment]
    assert seen == [True, False]


def _checks_on() -> bool:
    try:
        cst.Name("1x")
    except cst.CSTValidationError:
        return True
    return False


def test_overlapping_parses_in_threads_leave_checks_on() -> None:
    sources = [p.read_text(encoding="utf-8") for p in SOURCES[:12]]
    errors: list[BaseException] = []

    def work(chunk: list[str]) -> None:
        try:
            for text in chunk:
                parsed = parse(text + "\n# thread\n", "m.py")
                assert isinstance(parsed, cst.Module)
        except BaseException as exc:  # reported below
            errors.append(exc)

    STORE.clear()
    threads = [threading.Thread(target=work, args=(sources[k::3],)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert _checks_on()
