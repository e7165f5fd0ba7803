"""Verdicts of the cheap checks (TFG303/305/402/403) from made-up child reports: what each
criterion accepts and, as much, what it refuses."""

from __future__ import annotations

from typing import Any

from tflint_graph.dynamic.verdicts import (
    CONFIRMED,
    NOT_REPRODUCED,
    UNVERIFIED,
    Target,
    Verdict,
    verdicts_from_report,
)

_CALLS = [{"exception": None, "hits": {}, "lines": []}] * 3


def _judge(target: Target, experiments: dict[str, Any], **entry: Any) -> Verdict:
    body = {"id": 0, "error": None, "chosen": 0, **entry}
    body.setdefault(
        "attempts",
        [
            {
                "source": "guessed",
                "inputs": "float32[2,3]",
                "calls": _CALLS,
                "experiments": experiments,
            }
        ],
    )
    ((_, verdict),) = verdicts_from_report({"targets": [body]}, [target]).items()
    return verdict


def _retrace(counts: list[int]) -> Verdict:
    target = Target("step", ((9, "TFG303"),), kind="function", retrace=((9, "i", 1, "int"),))
    exp = {"param": "i", "kind": "int", "values": ["1", "2"], "counts": counts}
    return _judge(target, {"retrace:9": exp})


def test_retracing_confirmed_only_for_one_trace_per_new_value() -> None:
    confirmed = _retrace([1, 2, 2])
    assert confirmed.status == CONFIRMED
    assert confirmed.evidence.startswith(
        "staged: called a fresh copy of step() with i=1, then i=2, then i=1 again (Python ints"
    )
    assert "tracing count 1 -> 2, one new graph per new value" in confirmed.evidence
    # Tracing again on a repeated value is some other retracing, not the value's.
    assert _retrace([1, 2, 3]).status == UNVERIFIED
    # The second value reused the first one's graph (an input_signature converts it).
    assert _retrace([1, 1, 1]).status == NOT_REPRODUCED


def _first_call(first_ms: float, warm_ms: float, traces: int = 1) -> Verdict:
    target = Target("bench", ((20, "TFG403"),), kind="function", first_call=(20,))
    exp = {"first_ms": first_ms, "warm_ms": warm_ms, "traces": traces, "repeats": 5}
    return _judge(target, {"first_call": exp})


def test_first_call_confirmed_when_tracing_dominates_it() -> None:
    verdict = _first_call(120.0, 0.5)
    assert verdict.status == CONFIRMED
    assert "took 120.0 ms on its first call (tracing count 0 -> 1)" in verdict.evidence
    assert "0.50 ms per warm call" in verdict.evidence
    assert _first_call(0.9, 0.5).status == NOT_REPRODUCED  # under a millisecond: noise
    assert _first_call(120.0, 0.5, traces=0).status == NOT_REPRODUCED


def test_first_call_of_a_heavy_body_still_measures_its_tracing() -> None:
    # Tracing as long as a call makes the figure twice what the benchmark meant.
    verdict = _first_call(40.6, 21.4)
    assert verdict.status == CONFIRMED
    assert "1.9x a warm call, 19.2 ms more" in verdict.evidence
    assert _first_call(22.0, 21.4).status == NOT_REPRODUCED


def _graph(loop_ops: int, staged: dict[str, Any] | None = None) -> Verdict:
    target = Target("unrolled", ((7, "TFG305"),), kind="function", loops=((7, 8, 500, "N"),))
    exp: dict[str, Any] = {"count": 500, "ops": loop_ops + 2, "loop_ops": loop_ops, "seconds": None}
    if staged:
        exp["staged"] = staged
    return _judge(target, {"graph:7": exp})


def test_unrolled_loop_confirmed_by_one_op_per_iteration_at_its_lines() -> None:
    staged = {"name": "N", "old": 500, "new": 50, "ops": 102, "loop_ops": 100, "seconds": 0.1}
    verdict = _graph(1000, staged)
    assert verdict.status == CONFIRMED
    assert "1000 of them created by the loop at line 7 (500 iterations)" in verdict.evidence
    assert "staged: with N = 50 instead of 500, 102 ops (100 from the loop) in 0.10 s" in (
        verdict.evidence
    )
    assert _graph(3).status == NOT_REPRODUCED  # a tf.while_loop: a few ops, not 500 copies


def _switch(calls: list[list[Any]], after: bool, reloaded: bool = True) -> Verdict:
    target = Target("", ((5, "TFG402"),), kind="module")
    switch = {"after_import": after, "after_reload": after, "reloaded": reloaded, "calls": calls}
    return _judge(target, {}, switch=switch, attempts=[], chosen=None)


def test_eager_switch_confirmed_only_for_the_flagged_line_left_on() -> None:
    verdict = _switch([[5, True]], after=True)
    assert verdict.status == CONFIRMED
    assert "ran at line 5 while importing the module" in verdict.evidence
    assert _switch([[5, True], [6, False]], after=False).status == NOT_REPRODUCED
    # Another line switched it on: nothing about line 5.
    assert _switch([[9, True]], after=True).status == UNVERIFIED
    assert _switch([[5, True]], after=True, reloaded=False).status == UNVERIFIED


def _caller(calls: list[dict[str, Any]]) -> Verdict:
    target = Target("debug", ((12, "TFG402"),), kind="caller")
    attempt = {"source": "guessed", "inputs": "no arguments", "calls": calls}
    report = {"targets": [{"id": 0, "error": None, "attempts": [attempt], "chosen": 0}]}
    return verdicts_from_report(report, [target])[(12, "TFG402")]


def test_a_switch_to_eager_counts_when_the_eager_code_fails_later() -> None:
    # find_first_nan() turns eager on, then fails to download its data: the switch happened.
    raised = {"type": "Exception", "message": "URL fetch failure", "line": 14, "lines": [14]}
    verdict = _caller([{"exception": raised, "lines": [12, 13, 14], "eager_after": True}])
    assert verdict.status == CONFIRMED
    assert "the call then raised Exception at line 14" in verdict.evidence
    before = {"type": "Exception", "message": "no data", "line": 11, "lines": [11]}
    assert _caller([{"exception": before, "lines": [11], "eager_after": False}]).status == (
        UNVERIFIED
    )


def test_one_call_that_raised_neither_confirms_nor_refutes_a_recreated_function() -> None:
    target = Target("build", ((9, "TFG302"),), kind="caller")
    raised = {"type": "AttributeError", "message": "no attribute", "line": 11, "lines": [11]}
    calls = [{"exception": raised, "lines": [9, 11], "created": [[9, 1]]}]
    attempt = {"source": "guessed", "inputs": "float32[2,3]", "calls": calls}
    report = {"targets": [{"id": 0, "error": None, "attempts": [attempt], "chosen": 0}]}
    assert verdicts_from_report(report, [target])[(9, "TFG302")].status == UNVERIFIED


def _handler(
    lines: list[list[int]],
    exception: dict[str, Any] | None = None,
    ops: dict[str, int] | None = None,
) -> Verdict:
    # `try:` on line 5, its body from line 6, `except` on line 8, the handler from line 9.
    target = Target("safe", ((8, "TFG206"),), kind="function", handlers=((8, 6, 9),))
    calls = [
        {"exception": exception if i == 0 else None, "hits": {}, "lines": ran, "traced": i == 0}
        for i, ran in enumerate(lines)
    ]
    experiments = {"try:8": {"ops": {"CheckNumerics": 7, "Mean": 6} if ops is None else ops}}
    attempt = {
        "source": "guessed",
        "inputs": "float32[2,3]",
        "calls": calls,
        "experiments": experiments,
    }
    return _judge(target, {}, attempts=[attempt])


def test_handler_bypassed_when_only_tracing_ran_the_try_body() -> None:
    verdict = _handler([[6, 7], [], []])
    assert verdict.status == CONFIRMED
    assert verdict.evidence.startswith(
        "the try body (line 6) ran while tracing on the first call and put CheckNumerics "
        "(line 7) in the graph"
    )
    # Ops that check nothing at run time (a cast) leave the handler nothing to miss.
    cast = _handler([[6, 7], [], []], ops={"Cast": 6})
    assert cast.status == UNVERIFIED
    assert "none of its graph ops (Cast) is one known to raise" in cast.evidence
    # Every decoder checks its bytes when the graph runs (a corrupt WAV raises there).
    for decoder in ("DecodeWav", "DecodeBase64", "DecodeAndCropJpeg"):
        assert _handler([[6, 7], [], []], ops={decoder: 7}).status == CONFIRMED, decoder
    # decode_compressed's default compression_type ("") copies its input: it never fails.
    assert _handler([[6, 7], [], []], ops={"DecodeCompressed": 7}).status == UNVERIFIED
    # The handler ran: it caught something while tracing, not what the rule is about.
    assert _handler([[6, 9], [], []]).status == UNVERIFIED
    # The body ran on calls that did not trace: Python at call time, where except works.
    assert _handler([[6, 7], [6, 7], [6, 7]]).status == NOT_REPRODUCED
    assert _handler([[], [], []]).status == UNVERIFIED
    raised = {"type": "ValueError", "message": "boom", "line": 7}
    assert _handler([[6, 7]], raised).status == UNVERIFIED
