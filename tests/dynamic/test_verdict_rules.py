"""Verdicts from a child's report: a confirmation needs the effect the rule documents, at the
flagged line; trace-time evidence is kept when a later call fails; staged experiments say so.

The reports are written by hand here, in the shape ``child.run`` sends them, so each rule of
judgement is tested without starting TensorFlow."""

from __future__ import annotations

from typing import Any

from tflint_graph.core.examples import TensorSpecLite
from tflint_graph.dynamic.verdicts import (
    CONFIRMED,
    NOT_REPRODUCED,
    UNVERIFIED,
    Attempt,
    Target,
    Watch,
    verdicts_from_report,
)


def _target(findings: list[tuple[int, str]], **extra: Any) -> Target:
    attempt = Attempt("guessed", (TensorSpecLite("float32", (2, 3)),))
    return Target(path="f", findings=tuple(findings), attempts=(attempt,), **extra)


def _call(**fields: Any) -> dict[str, Any]:
    call: dict[str, Any] = {
        "exception": None,
        "changed": {},
        "hits": {},
        "eager_hits": {},
        "lines": [],
        "missing": [],
        "containers": [],
        "traced": False,
        "symbolic": False,
    }
    call.update(fields)
    return call


def _report(calls: list[dict[str, Any]], **result: Any) -> dict[str, Any]:
    attempt = {"source": "guessed", "inputs": "float32[2,3]", "calls": calls, **result}
    return {"device": "/device:CPU:0", "targets": [{"id": 0, "attempts": [attempt], "chosen": 0}]}


def _judge(target: Target, calls: list[dict[str, Any]], **result: Any):
    return verdicts_from_report(_report(calls, **result), [target])


def _exception(kind: str, message: str, lines: list[int], mro: tuple[str, ...] = ()) -> dict:
    return {
        "type": kind,
        "mro": [kind, *mro, "Exception", "BaseException", "object"],
        "message": message,
        "detail": message,
        "line": lines[-1] if lines else None,
        "lines": lines,
    }


def test_a_dtype_clash_of_the_guessed_input_is_no_tensor_used_as_a_python_value() -> None:
    exc = _exception(
        "TypeError",
        "Input 'input' of 'StringLength' Op has type float32 that does not match expected "
        "type of string.",
        [7],
    )
    verdict = _judge(_target([(7, "TFG203")]), [_call(exception=exc, symbolic=True)])[(7, "TFG203")]
    assert verdict.status == UNVERIFIED
    assert "instead" in verdict.evidence


def test_a_symbolic_tensor_error_with_the_line_anywhere_in_the_traceback_confirms() -> None:
    # The flagged line calls a helper; the deepest module line is in the helper.
    exc = _exception("TypeError", "int() argument must be a string, not 'SymbolicTensor'", [7, 12])
    verdict = _judge(_target([(7, "TFG203")]), [_call(exception=exc, symbolic=True)])[(7, "TFG203")]
    assert verdict.status == CONFIRMED, verdict


def test_the_documented_error_elsewhere_does_not_confirm() -> None:
    exc = _exception(
        "OperatorNotAllowedInGraphError",
        "Using a symbolic `tf.Tensor` as a Python `bool` is not allowed.",
        [12],
        ("TypeError",),
    )
    verdict = _judge(_target([(7, "TFG201")]), [_call(exception=exc, symbolic=True)])[(7, "TFG201")]
    assert verdict.status == UNVERIFIED
    assert "line 7 is not in its traceback" in verdict.evidence


def test_trace_time_evidence_is_kept_when_a_call_with_values_fails() -> None:
    trace = _call(symbolic=True, traced=True, hits={"5": {"print:print": 1}}, lines=[5])
    failed = _call(
        exception=_exception(
            "InvalidArgumentError", "labels 7 out of range [0, 2)", [9], ("OpError",)
        )
    )
    verdict = _judge(_target([(5, "TFG101")]), [trace, failed])[(5, "TFG101")]
    assert verdict.status == CONFIRMED, verdict
    assert "print ran 1 time while tracing with symbolic inputs" in verdict.evidence
    assert "InvalidArgumentError" in verdict.evidence
    assert "a traced graph runs no Python" in verdict.evidence


def test_a_probe_that_ran_at_call_time_is_not_reproduced() -> None:
    # A print inside tf.py_function runs on every call, outside graph building.
    trace = _call(symbolic=True, traced=True)
    calls = [
        _call(hits={"5": {"print:print": 1}}, eager_hits={"5": {"print:print": 1}})
        for _ in range(3)
    ]
    verdict = _judge(_target([(5, "TFG101")]), [trace, *calls])[(5, "TFG101")]
    assert verdict.status == NOT_REPRODUCED
    assert "at call time" in verdict.evidence


def test_a_retrace_is_trace_time_too() -> None:
    hit = {"5": {"print:print": 1}}
    calls = [
        _call(traced=True, hits=hit, lines=[5]),
        _call(traced=True, hits=hit, lines=[5]),
        _call(),
    ]
    verdict = _judge(_target([(5, "TFG101")]), calls)[(5, "TFG101")]
    assert verdict.status == CONFIRMED, verdict
    assert "print ran 2 times while tracing on the first call" in verdict.evidence
    assert "(the function traced again on 1 later call)" in verdict.evidence


def test_state_changed_while_tracing_kept_when_values_fail() -> None:
    watch = Watch(6, "TFG102", "global", "history")
    trace = _call(
        symbolic=True,
        traced=True,
        lines=[6],
        changed={"history": "len 0 -> len 1"},
        containers=["history"],
    )
    failed = _call(exception=_exception("InvalidArgumentError", "bad value", [9]))
    verdict = _judge(_target([(6, "TFG102")], watches=(watch,)), [trace, failed])[(6, "TFG102")]
    assert verdict.status == CONFIRMED, verdict
    assert "len 0 -> len 1" in verdict.evidence


def test_state_changing_on_calls_that_did_not_trace_is_not_reproduced() -> None:
    watch = Watch(6, "TFG102", "global", "history")
    first = _call(
        traced=True, lines=[6], changed={"history": "len 0 -> len 1"}, containers=["history"]
    )
    later = _call(lines=[6], changed={"history": "len 1 -> len 2"}, containers=["history"])
    verdict = _judge(_target([(6, "TFG102")], watches=(watch,)), [first, later])[(6, "TFG102")]
    assert verdict.status == NOT_REPRODUCED


def test_staged_experiments_say_so() -> None:
    stale = {
        "stale:scale": {
            "old": "2",
            "new": "5",
            "traced_changed": False,
            "eager_changed": True,
        },
        "shapes": {"before": 1, "counts": [2, 3], "sizes": [3, 4]},
    }
    target = _target(
        [(4, "TFG109"), (2, "TFG301")],
        watches=(Watch(4, "TFG109", "global", "scale"),),
        stale=("scale",),
        shapes=True,
    )
    verdicts = _judge(target, [_call(traced=True), _call()], experiments=stale)
    assert verdicts[(4, "TFG109")].status == CONFIRMED
    assert verdicts[(4, "TFG109")].evidence.startswith("staged: dynamic mode set scale = 5")
    assert verdicts[(2, "TFG301")].status == CONFIRMED
    assert "staged: dynamic mode called it with new batch sizes 3, 4" in (
        verdicts[(2, "TFG301")].evidence
    )


def test_a_new_batch_size_that_traced_then_failed_to_run_still_shows_the_trace() -> None:
    def shapes(counts: list[int], raised: str = "") -> Any:
        exp: dict[str, Any] = {"before": 1, "counts": counts, "sizes": [3, 4][: len(counts)]}
        if raised:
            exp["raised"] = raised
        target = _target([(2, "TFG301")], shapes=True)
        return _judge(target, [_call(traced=True), _call()], experiments={"shapes": exp})[
            (2, "TFG301")
        ]

    verdict = shapes([2], "InvalidArgumentError: Graph execution error:")
    assert verdict.status == CONFIRMED
    assert "the tracing count went 1 -> 2 (the last call then raised InvalidArgumentError" in (
        verdict.evidence
    )
    assert shapes([1, 1]).status == NOT_REPRODUCED


def test_the_inputs_actually_run_travel_with_each_verdict() -> None:
    calls = [_call(traced=True, hits={"5": {"print:print": 1}}, lines=[5]), _call()]
    verdict = _judge(_target([(5, "TFG101")]), calls)[(5, "TFG101")]
    assert verdict.inputs == "float32[2,3]"
